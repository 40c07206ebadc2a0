package claudecode

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// FuzzParse: no session file makes Parse panic, and what it gives is
// entries a state document takes (a role of its two, text not empty),
// which Write writes and Parse reads back as they were (but a user's
// text that starts as a local command's does, passed over).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/session.jsonl", "testdata/compacted.jsonl"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"hi"}}` + "\n" + `{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"yo"}]}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"image"},{"type":"text","text":"[Request interrupted by user]"}]}}`))
	f.Add([]byte("{\n[\n\"x\"\nnull"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse(context.Background(), bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		for _, e := range got {
			if e.Text == "" || (e.Role != contract.RoleUser && e.Role != contract.RoleAgent) {
				t.Fatalf("gave %+v", e)
			}
		}
		w, err := Write(got, "0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60", "/w", time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(context.Background(), bytes.NewReader(w), int64(len(w))+1)
		if err != nil {
			t.Fatal(err)
		}
		var want []contract.StateEntry
		for _, e := range got {
			if e.Role == contract.RoleAgent || !localCommand(e.Text) {
				want = append(want, e)
			}
		}
		if len(again) != len(want) {
			t.Fatalf("read back %d entries of %d", len(again), len(want))
		}
		for i := range want {
			if again[i].Role != want[i].Role || again[i].Text != want[i].Text {
				t.Fatalf("entry %d read back %+v, was %+v", i, again[i], want[i])
			}
			if i > 0 && again[i].Time != nil && again[i-1].Time != nil && !again[i].Time.After(*again[i-1].Time) {
				t.Fatalf("entry %d written at %v, not after the one before it at %v", i, again[i].Time, again[i-1].Time)
			}
		}
	})
}
