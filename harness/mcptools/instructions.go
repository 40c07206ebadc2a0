package mcptools

import (
	"sort"
	"strings"

	"github.com/lnk-dev/link/model"
)

// Instructions is what agent's tools say of themselves, for the prompt's
// tools section: each of its servers' own instructions (MCP's initialize
// answer), at most MaxInstructions each, in order of the tool's name,
// for the tools offered alone: a conversation narrowed to none of a
// tool's calls has none of its words. A tool listed only in
// tool-lists.json (one that failed to start) is described as it was.
func (t *Tools) Instructions(agent string, offer []model.Tool) []model.ToolText {
	a := t.agent(agent)
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []model.ToolText
	for _, s := range a.current {
		l, ok := a.listingOf(s)
		if !ok || l.Instructions == "" || !offers(offer, s.name) {
			continue
		}
		out = append(out, model.ToolText{Tool: s.name, Text: l.Instructions})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
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
