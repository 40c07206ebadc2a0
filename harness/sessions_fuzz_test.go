package harness

import (
	"errors"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzListCursor proves a session/list cursor, from an editor, never
// panics threadOfCursor, is refused naming the rule unless cursorOf gave
// it, and that one it gave reads back as its thread.
func FuzzListCursor(f *testing.F) {
	for _, s := range []string{"", cursorOf("discord:1"), cursorOf("telegram:42.7"), "x", "ZGlzY29yZDox==", "bm90IGEgdGhyZWFk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		thread, err := threadOfCursor(cursor)
		if err != nil {
			var re *contract.RuleError
			if !errors.As(err, &re) || re.Field != "cursor" {
				t.Fatalf("%q refused naming no rule: %v", cursor, err)
			}
			return
		}
		if cursor == "" {
			if thread != "" {
				t.Fatalf("no cursor read as %q", thread)
			}
			return
		}
		if contract.CheckThread(thread) != nil || cursorOf(thread) != cursor {
			t.Fatalf("%q read as thread %q", cursor, thread)
		}
	})
}
