package recovery

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzPage proves a page, whatever its answers' text (an agent's words:
// escapes, broken UTF-8) and its bound, is within the bound encoded,
// holds at least the first answer, whole or cut at a character's start
// with CutNote, and the others whole.
func FuzzPage(f *testing.F) {
	for _, s := range []string{"plain", "<&>\u2028\x00\"\\", "\xff\xfe", "é" + strings.Repeat("<", 300)} {
		f.Add(s, "second", uint16(400), true)
	}
	f.Fuzz(func(t *testing.T, first, second string, bound uint16, twoPhase bool) {
		max := 400 + int(bound)%4000
		m := &memory{list: []Answer{{ID: "hub-1", Thread: "telegram:1", Text: first}, {ID: "hub-2", Thread: "telegram:2", Text: second}}}
		l := &Ledger{Store: m, Max: max}
		res, err := l.Recover(t.Context(), contract.RecoverParams{TwoPhase: twoPhase}, nil)
		if err != nil || len(res.Answers) == 0 {
			t.Fatalf("%d answers, %v", len(res.Answers), err)
		}
		b, err := json.Marshal(res)
		if err != nil || len(b) > max {
			t.Fatalf("result of %d bytes, over %d (%v)", len(b), max, err)
		}
		if got := res.Answers[0].Text; got != first {
			start, ok := strings.CutSuffix(got, CutNote)
			if !ok || !strings.HasPrefix(first, start) || len(start) < len(first) && len(start) > 0 && !isRuneStart(first[len(start)]) {
				t.Fatalf("first answer %q of %q: neither whole nor cut at a character's start with the note", got, first)
			}
		}
		if len(res.Answers) == 2 && res.Answers[1].Text != second {
			t.Fatalf("second answer %q, not %q whole", res.Answers[1].Text, second)
		}
	})
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
