package harness

import (
	"encoding/json"
	"strings"

	"github.com/lnk-dev/link/store"
)

// specs are the tables of the agent's spec the turn's calls carry as
// link.local/spec (CallMeta.Specs), by tool name, for the tools the
// conversation has: only when the message the turn answers is from others
// and the conversation was given its tools (a subagent's task), as the
// endpoint says Link sends it; nil otherwise, or when the spec has none.
func (t *turn) specs(narrowed *[]string) map[string]json.RawMessage {
	s := t.c.settings
	if narrowed == nil || t.from() == "" || (len(s.ToolsSpec) == 0 && len(s.ToolSpecs) == 0) {
		return nil
	}
	out := map[string]json.RawMessage{}
	for _, name := range *narrowed {
		tool, _, ok := strings.Cut(name, "__")
		if _, done := out[tool]; !ok || done {
			continue
		}
		if spec := s.ToolSpec(tool); len(spec) > 0 {
			out[tool] = spec
		}
	}
	return out
}

// from is who sent the message the turn answers, its latest: "" for the
// owner.
func (t *turn) from() string {
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Kind == store.KindMessage {
			return e.From
		}
	}
	return ""
}
