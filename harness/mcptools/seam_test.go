package mcptools

import (
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/store"
)

// Tools fills the harness's seams; the package itself doesn't import the
// harness, so the hub's adapter links neither it nor the store.
var (
	_ harness.Tools      = (*Tools)(nil)
	_ harness.Instructor = (*Tools)(nil)
)

// TestBoundsMatchHarness: the bounds this package writes as numbers are
// the harness's: an answer's text twice what the harness keeps of one, a
// tool's instructions the most the prompt says of one.
func TestBoundsMatchHarness(t *testing.T) {
	if maxAnswerText != 2*harness.MaxToolAnswer {
		t.Errorf("maxAnswerText = %d, want 2*harness.MaxToolAnswer = %d", maxAnswerText, 2*harness.MaxToolAnswer)
	}
	if MaxInstructions != prompt.MaxToolText {
		t.Errorf("MaxInstructions = %d, want prompt.MaxToolText = %d", MaxInstructions, prompt.MaxToolText)
	}
}

// TestForHomeToolLists: ForHome keeps an agent's tool-lists.json where
// the store places it, and refuses the agent names the store refuses.
func TestForHomeToolLists(t *testing.T) {
	if _, err := ForHome("", nil, nil); err == nil {
		t.Error(`ForHome("") made tools; want no home refused`)
	}
	home := t.TempDir()
	tl, err := ForHome(home, map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	for _, name := range []string{"main", "sam", "agent-2", "", "../x", "a/b", ".."} {
		got, err := tl.cfg.ToolLists(name)
		p, serr := store.For(home, name)
		switch {
		case serr != nil && err == nil:
			t.Errorf("%q: tools keep tool-lists.json at %s; the store refuses it: %v", name, got, serr)
		case serr == nil && err != nil:
			t.Errorf("%q: tools refuse it (%v); the store doesn't", name, err)
		case serr == nil && got != p.ToolLists():
			t.Errorf("%q: tools keep tool-lists.json at %s, the store at %s", name, got, p.ToolLists())
		}
	}
}
