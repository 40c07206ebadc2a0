package window

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// quoted is how much of the first message that stays a request for a
// summary quotes, in characters.
const quoted = 200

// SummaryHead heads a summary where the window starts with it.
const SummaryHead = "[A summary of the conversation before this point]\n"

// Ask is the harness's request for a summary, sent after the window and
// its answer (or, for a window past its room, after what leaves): what
// to cover ends where the message quoting first's start begins (first ""
// when nothing stays: cover it all). With notes, the model is asked to
// save what matters to its owner first with memory__remember, and to call
// nothing else. words bounds the summary.
func Ask(first string, notes bool, words int) string {
	var b strings.Builder
	b.WriteString("[Link Harness: the start of this conversation is leaving your window.")
	if notes {
		b.WriteString(" First, save with memory__remember what in it matters to your owner for every later conversation (what they told you about themselves, their people, their plans and wishes), one note a call, and call nothing else; with nothing to save, call nothing.")
		b.WriteString(" Then")
	} else {
		b.WriteString(" Now")
	}
	first = strings.TrimSpace(first)
	if first == "" {
		b.WriteString(" write a summary of the conversation above")
	} else {
		if utf8.RuneCountInString(first) > quoted {
			first = string([]rune(first)[:quoted]) + "..."
		}
		b.WriteString(" write a summary of the conversation above, up to the message that begins:\n> ")
		b.WriteString(strings.ReplaceAll(first, "\n", "\n> "))
		b.WriteString("\nThat message and what follows it stay in your window: don't summarize them.")
	}
	fmt.Fprintf(&b, " Keep what you'll need to go on: who said what, what was decided, what is still to do, names, numbers and files. At most %d words, in the conversation's language. Write only the summary; it isn't shown to anyone.]", words)
	return b.String()
}
