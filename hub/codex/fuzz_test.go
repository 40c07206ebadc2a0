package codex

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// FuzzParse: no rollout makes Parse panic, and what it gives is entries
// a state document takes (a role of its two, text not empty), which
// Write writes and Parse reads back as they were.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/rollout.jsonl", "testdata/compacted.jsonl"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"user_message","message":"hi","images":["x"]}}` + "\n" + `{"type":"event_msg","payload":{"type":"agent_message","message":"yo"}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}`))
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
		w, err := Write(got, "01a2333d-3db6-7b60-833e-8381f777dcca", "/w", time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(context.Background(), bytes.NewReader(w), int64(len(w))+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(got) {
			t.Fatalf("read back %d entries of %d", len(again), len(got))
		}
		for i := range got {
			if again[i].Role != got[i].Role || again[i].Text != got[i].Text {
				t.Fatalf("entry %d read back %+v, was %+v", i, again[i], got[i])
			}
		}
	})
}
