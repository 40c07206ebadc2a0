package harness

import (
	"context"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// Tools is the seam through which a turn reaches the agent's tools;
// harness/mcptools fills it over MCP. A round's calls are made at once, so
// Call is called from several goroutines.
type Tools interface {
	// Offer lists the tools the agent's model is offered this turn, in a
	// stable order (by name), only those narrowed allows (nil: every
	// tool; empty: none).
	Offer(ctx context.Context, agent string, narrowed *[]string) ([]model.Tool, error)
	// Call makes one call, answering its text and whether it failed. A
	// tool that can't be reached is answered as an error, never a Go
	// error: the model is told.
	Call(ctx context.Context, agent string, call model.ToolCall, meta contract.CallMeta) (text string, isError bool)
	// EndTurn ends what the turn opened that isn't kept between turns.
	EndTurn(ctx context.Context, agent string)
}

// Instructor is a Tools whose servers say how their tools work together
// (MCP's initialize instructions): the words of the prompt's tools
// section, each tool's own, for the tools offered only.
type Instructor interface {
	Instructions(agent string, offered []model.Tool) []model.ToolText
}

// ThreadEnder is a Tools whose sessions that aren't kept between turns
// are each conversation's own: EndThreadTurn ends those of thread's turn
// alone, where EndTurn ends every one of agent's not in a call.
type ThreadEnder interface {
	EndThreadTurn(ctx context.Context, agent, thread string)
}

// NoTools is a Tools with none: it offers no tool, and answers any call
// as one of a tool there isn't.
type NoTools struct{}

var _ Tools = NoTools{}

// Offer returns no tools.
func (NoTools) Offer(context.Context, string, *[]string) ([]model.Tool, error) { return nil, nil }

// Call answers that there is no such tool.
func (NoTools) Call(_ context.Context, _ string, call model.ToolCall, _ contract.CallMeta) (string, bool) {
	return noSuchTool(call.Name), true
}

// EndTurn has no session to end.
func (NoTools) EndTurn(context.Context, string) {}

func noSuchTool(name string) string {
	return "There is no tool " + name + " in this conversation."
}

// MaxToolAnswer bounds a tool's answer as kept and sent to the model, so
// one answer can't fill the window.
const MaxToolAnswer = 32 << 10

// capToolAnswer cuts text to MaxToolAnswer bytes at a rune boundary,
// saying so.
func capToolAnswer(text string) string {
	if len(text) <= MaxToolAnswer {
		return text
	}
	note := "\n[The tool's answer was cut here: it passed 32 KiB, the most kept of one.]"
	return cutRunes(text, MaxToolAnswer-len(note)) + note
}

// cutRunes is the longest prefix of s of at most n bytes ending at a rune
// boundary.
func cutRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// storeCalls converts a response's calls to the store's.
func storeCalls(calls []model.ToolCall) []store.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]store.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = store.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input}
	}
	return out
}
