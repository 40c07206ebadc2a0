package chatterm

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestSplitDone(t *testing.T) {
	for _, c := range []struct{ in, done string }{
		{"", ""},
		{"Hello", ""},
		{"Hello\n", ""},
		{"Hello\n\n", "Hello\n\n"},
		{"\n\nHello", ""},
		{"# Title\n\n- one\n- two", "# Title\n\n"},
		{"# Title\n\n- one\n- two\n\nAfter", "# Title\n\n- one\n- two\n\n"},
		{"```go\nx := 1\n\ny := 2\n", ""},
		{"```go\nx := 1\n\ny := 2\n```\n\nnext", "```go\nx := 1\n\ny := 2\n```\n\n"},
		{"~~~\n\n~~~\n\n", "~~~\n\n~~~\n\n"},
		{"    ```\n\nnot a fence\n\n", "    ```\n\nnot a fence\n\n"},
	} {
		done, rest := splitDone(c.in)
		if done != c.done || done+rest != c.in {
			t.Errorf("splitDone(%q) = %q, %q; want done %q", c.in, done, rest, c.done)
		}
	}
}

// tidy takes away glamour's padding and its blank lines around, and
// leaves what is drawn.
func TestRenderTidy(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		out := newMarkdown(noColor).render("# Plan\n\n- one\n- two\n", 60)
		plain := ansi.Strip(out)
		if strings.HasPrefix(plain, "\n") || strings.HasSuffix(plain, "\n") {
			t.Errorf("noColor %v: blank lines around %q", noColor, plain)
		}
		for _, l := range strings.Split(plain, "\n") {
			if strings.HasSuffix(l, " ") {
				t.Errorf("noColor %v: padded line %q", noColor, l)
			}
		}
		if !strings.Contains(plain, "• one") || !strings.Contains(plain, "• two") {
			t.Errorf("noColor %v: list not rendered: %q", noColor, plain)
		}
		if hasColor := strings.Contains(out, "\x1b[38;5;"); hasColor == noColor {
			t.Errorf("noColor %v: colour %v in %q", noColor, hasColor, out)
		}
		if !noColor && strings.Contains(plain, "# Plan") {
			t.Errorf("heading not rendered: %q", plain)
		}
	}
}

// writes keeps each write the view makes.
type writes struct {
	mu sync.Mutex
	w  []string
	// wrote, when made, is sent to after each write, never blocking.
	wrote chan struct{}
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w = append(w.w, string(p))
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *writes) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w[len(w.w)-1]
}

// A streamed answer: the spinner until the first word, each block drawn
// once whole, a tool call running then done with its time, the spinner
// again while the model works after it, and nothing live at the end.
// Each change is one write that begins by erasing the live part.
func TestViewStream(t *testing.T) {
	var w writes
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := NewView(&w, ViewOptions{Width: func() int { return 60 }, Tick: time.Hour, Now: func() time.Time { return now }})
	v.Begin()
	if got := w.last(); !strings.HasSuffix(got, "⠋ 0.0s\n") || !strings.HasPrefix(got, "\r"+ansi.EraseScreenBelow) {
		t.Fatalf("begin drew %q", got)
	}
	now = now.Add(1200 * time.Millisecond)
	v.Chunk("# Title\n")
	if got := ansi.Strip(w.last()); got != "\r"+ansi.Strip(ansi.CursorUp(1))+"# Title\n" {
		t.Fatalf("a block being written drew %q", got)
	}
	v.Chunk("\n- one\n")
	got := ansi.Strip(w.last())
	if !strings.Contains(got, "Title") || strings.Contains(got, "# Title") || !strings.HasSuffix(got, "- one\n") {
		t.Fatalf("the whole heading, then the list being written, drew %q", got)
	}
	v.ToolCall("c1", "web__fetch")
	got = ansi.Strip(w.last())
	if !strings.Contains(got, "• one") || !strings.HasSuffix(got, "⚙ web__fetch … 0.0s\n") {
		t.Fatalf("a call drew %q", got)
	}
	now = now.Add(1500 * time.Millisecond)
	v.ToolDone("c1", false)
	got = ansi.Strip(w.last())
	if !strings.Contains(got, "⚙ web__fetch done 1.5s\n") || !strings.HasSuffix(got, "⠋ 0.0s\n") {
		t.Fatalf("the call's end drew %q", got)
	}
	v.ToolCall("c2", "memory__search")
	v.ToolDone("c2", true)
	if got := ansi.Strip(w.last()); !strings.Contains(got, "⚙ memory__search failed 0.0s\n") {
		t.Fatalf("a failed call drew %q", got)
	}
	v.Chunk("Found it.")
	v.End()
	got = ansi.Strip(w.last())
	if !strings.HasSuffix(got, "Found it.\n") || strings.Contains(got, "⠋") || v.rows != 0 {
		t.Fatalf("the end drew %q, %d rows live", got, v.rows)
	}
	// Each draw erases what it drew live before: one row up for each.
	var all bytes.Buffer
	for _, s := range w.w {
		all.WriteString(s)
	}
	if strings.Count(all.String(), ansi.EraseScreenBelow) != len(w.w) {
		t.Fatalf("a write without its erase: %q", all.String())
	}
}

// The spinner counts the time waited, drawn again at each tick.
func TestViewTicks(t *testing.T) {
	w := writes{wrote: make(chan struct{}, 1)}
	v := NewView(&w, ViewOptions{Width: func() int { return 60 }, Tick: time.Millisecond})
	v.Begin()
	timeout := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		n := len(w.w)
		w.mu.Unlock()
		if n >= 3 {
			break
		}
		select {
		case <-w.wrote:
		case <-timeout:
			t.Fatalf("%d draws in 10s", n)
		}
	}
	// End returns once the ticker has stopped: its write is the last.
	v.End()
	if got := w.last(); strings.Contains(got, "s\n") || v.stop != nil {
		t.Fatalf("the end left the spinner: %q", got)
	}
}

// An agent's text and its tools' titles reach the terminal as words,
// never as its codes: a clipboard write (OSC 52), a colour, a carriage
// return over the line and a C1 control are left out of what is drawn.
func TestViewNoAgentCodes(t *testing.T) {
	var w writes
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := NewView(&w, ViewOptions{Width: func() int { return 80 }, Tick: time.Hour, Now: func() time.Time { return now }, NoColor: true})
	v.Begin()
	v.Chunk("Sure.\x1b]52;c;ZXZpbA==\x07 Done\r\x1b[31mred\u009b2J\n\n")
	v.ToolCall("c1", "web\x1b]0;owned\x07__fetch")
	v.ToolDone("c1", false)
	v.Markdown("whole \x1b[2Janswer")
	v.End()
	var all strings.Builder
	for _, s := range w.w {
		all.WriteString(s)
	}
	for _, code := range []string{"\x1b]52", "\x1b]0", "\x1b[31m", "\x1b[2J", "\r\x1b[31", "\u009b", "\x07"} {
		if strings.Contains(all.String(), code) {
			t.Errorf("the agent's code %q reached the terminal: %q", code, all.String())
		}
	}
	for _, word := range []string{"Sure.", "Done", "red", "web]0;owned__fetch", "whole [2Janswer"} {
		if !strings.Contains(ansi.Strip(all.String()), word) {
			t.Errorf("%q not shown: %q", word, ansi.Strip(all.String()))
		}
	}
}
