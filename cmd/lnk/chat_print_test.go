package main

import (
	"strings"
	"testing"
)

// A tool call's title is shown on a line of its own, as words: its
// control characters (an ESC, a newline) never reach the terminal.
func TestPrinterToolTitle(t *testing.T) {
	var text, calls strings.Builder
	p := newPrinter(&text, &calls)
	p.toolCall("c1", "web\x1b]0;owned\x07__fetch\nsecond line")
	p.toolDone("c1", "done")
	got := calls.String()
	if strings.ContainsAny(got, "\x1b\x07") || strings.Count(got, "\n") != 2 || !strings.Contains(got, "web ]0;owned __fetch second line") {
		t.Fatalf("calls shown as %q", got)
	}
}
