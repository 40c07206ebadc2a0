package gemini

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// FuzzParse: no chat file makes Parse panic, and what it gives is
// entries a state document takes (a role of its two, text not empty),
// which Write writes and Parse reads back as they were.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/session.jsonl"); err == nil {
		f.Add(b)
		f.Add(append(b, fresh...))
	}
	f.Add([]byte(`{"sessionId":"s","projectHash":"h","messages":[{"id":"a","type":"user","content":"hi"}]}` + "\n" + `{"id":"b","type":"gemini","content":[{"text":"yo"}]}`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}` + "\n" + `{"$rewindTo":"zz"}` + "\n" + `{"$set":{"messages":[1,{"id":"q","type":"user","content":{"text":"x"}}]}}`))
	f.Add([]byte("{\n[\n\"x\"\nnull"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse(context.Background(), bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		for _, e := range got.Entries {
			if e.Text == "" || (e.Role != contract.RoleUser && e.Role != contract.RoleAgent) {
				t.Fatalf("gave %+v", e)
			}
		}
		w, err := Write(got.Entries, "8cb879c0-a9b4-403f-84c0-3f6f73d9480f", "/w", time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(context.Background(), bytes.NewReader(w), int64(len(w))+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Entries) != len(got.Entries) {
			t.Fatalf("read back %d entries of %d", len(again.Entries), len(got.Entries))
		}
		for i := range got.Entries {
			if again.Entries[i].Role != got.Entries[i].Role || again.Entries[i].Text != got.Entries[i].Text {
				t.Fatalf("entry %d read back %+v, was %+v", i, again.Entries[i], got.Entries[i])
			}
		}
	})
}
