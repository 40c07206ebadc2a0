package tools

import (
	"strings"

	"github.com/lnk-dev/link/model"
)

// Instructions is the tools section's text for agent: each of its
// tools' servers' own instructions (MCP's initialize answer), at most
// MaxInstructions each, under the tool's name ("## memory"), in order of
// name, for the tools offered alone: a conversation narrowed to none of
// a tool's calls has none of its words. A tool listed only in
// tool-lists.json is described as it was. "" when none says anything.
func (t *Tools) Instructions(agent string, offer []model.Tool) string {
	a := t.agent(agent)
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, s := range a.current {
		l, ok := a.listingOf(s)
		if !ok || l.Instructions == "" || !offers(offer, s.name) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## ")
		b.WriteString(s.name)
		b.WriteString("\n\n")
		b.WriteString(l.Instructions)
	}
	return b.String()
}

// offers says whether offer has a call of tool's.
func offers(offer []model.Tool, tool string) bool {
	for _, o := range offer {
		if strings.HasPrefix(o.Name, tool+"__") {
			return true
		}
	}
	return false
}
