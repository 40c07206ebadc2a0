package prompt

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHold(t *testing.T) {
	note := func(n int) string { return "\n" + fmt.Sprintf(CutNote, n) }
	for _, c := range []struct {
		text string
		max  int
		over bool
		want string
	}{
		{"  short  \n", 10, false, "short"},
		{"one two three four", 12, false, "one two" + note(12)},
		{"line one\nline two", 12, false, "line one" + note(12)},
		{"abcdefghij", 4, false, "abcd" + note(4)},
		{"été été", 3, false, "ét" + note(3)}, // é is two bytes: never half of one
		{"abcd", 4, true, "abcd" + note(4)},   // the first 4 bytes of a longer file
		{"ab\xc3", 3, true, "ab" + note(3)},   // its last character cut short
	} {
		got := hold(c.text, c.max, c.over)
		if got != c.want {
			t.Errorf("hold(%q, %d, %v) = %q, want %q", c.text, c.max, c.over, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("hold(%q) is not UTF-8", c.text)
		}
	}
}

func FuzzHold(f *testing.F) {
	f.Add("line one\nline two été", 7)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if max < 0 || max > 1<<12 || !utf8.ValidString(text) {
			return
		}
		got := hold(text, max, false)
		body := strings.TrimSuffix(got, fmt.Sprintf(CutNote, max))
		if len(strings.TrimSpace(body)) > max {
			t.Fatalf("hold(%q, %d) = %q: over the most", text, max, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("hold(%q, %d) = %q: not UTF-8", text, max, got)
		}
	})
}

func TestList(t *testing.T) {
	entries := []string{"- a: one", "- b: two", "- c: three"}
	for _, c := range []struct {
		max      int
		cutFirst bool
		want     string
	}{
		{100, false, "I\n- a: one\n- b: two\n- c: three"},
		{20, false, "I\n- a: one\n- b: two\n\n" + fmt.Sprintf(LeftOutNote, 1, 20)},
		{5, false, "I\n" + fmt.Sprintf(LeftOutNote, 3, 5)},
		{6, true, "I\n- a:\n" + fmt.Sprintf(CutNote, 4) + "\n\n" + fmt.Sprintf(LeftOutNote, 2, 6)},
	} {
		if got := list("I\n", "\n", entries, c.max, c.cutFirst); got != c.want {
			t.Errorf("list(max %d, cutFirst %v) =\n%q\nwant\n%q", c.max, c.cutFirst, got, c.want)
		}
	}
	if got := list("I\n", "\n", nil, 100, false); got != "" {
		t.Errorf("list of none = %q, want none", got)
	}
}

func TestOnlyPointsAtAgents(t *testing.T) {
	for text, want := range map[string]bool{
		"@AGENTS.md":                 true,
		"@./AGENTS.md\n\n":           true,
		"@../AGENTS.md":              true,
		"@AGENTS.md\nAlso use tabs.": false,
		"See AGENTS.md":              false,
		"@README.md":                 false,
	} {
		if got := onlyPointsAtAgents(text); got != want {
			t.Errorf("onlyPointsAtAgents(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestEnvironmentAtStart: the environment is told as it was at the
// agent's first prompt here, so a later change doesn't move the cache.
func TestEnvironmentAtStart(t *testing.T) {
	f, _ := sampleHome(t)
	c := &Composer{Files: f}
	turn := sampleTurn()
	first := c.environment("main", turn.Environment, 2048)
	later := c.environment("main", Env{FilesFolder: "/elsewhere", Connections: []string{"discord"}}, 2048)
	if later != first {
		t.Errorf("environment changed from\n%s\nto\n%s", first, later)
	}
	if other := c.environment("other", Env{FilesFolder: "/elsewhere"}, 2048); !strings.Contains(other, "/elsewhere") {
		t.Errorf("another agent's environment = %q", other)
	}
}
