package delivery

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzParse: answers.json reads as answers of its thread's folder, each
// id once, or is refused, and what reads is written and reads back the
// same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`,
		`[{"id":"telegram-1~abc","thread":"telegram:1","text":"hi","at":"2026-11-30T09:15:00Z","seq":4,"forChat":true}]`,
		`[{"id":"telegram-1~abc","thread":"telegram:1","at":"2026-11-30T09:15:00+01:00","forChat":true}]`,
		`[{"id":"telegram-1~abc","thread":"telegram:1","at":"0001-01-01T00:00:00Z","forChat":1}]`,
		`[{"id":"telegram-2~abc","thread":"telegram:1","text":"hi","at":"2026-11-30T09:15:00Z"}]`,
		`[{"id":"telegram-1~a","thread":"telegram:1"},{"id":"telegram-1~a","thread":"telegram:1"}]`,
		`[{"id":"telegram-1~","thread":"telegram:1"}]`,
		`[{"thread":"telegram:1","at":"yesterday"}]`, `{`, `[1,2]`,
	} {
		f.Add([]byte(s), "telegram:1")
	}
	f.Add([]byte(`[]`), "../x")
	f.Fuzz(func(t *testing.T, b []byte, thread string) {
		all, err := Parse(b, thread)
		if err != nil {
			return
		}
		folder, ferr := contract.ThreadFolder(thread)
		if ferr != nil {
			t.Fatalf("accepted answers of a thread the contract refuses: %q", thread)
		}
		seen := map[string]bool{}
		for _, k := range all {
			if k.Thread != thread || !strings.HasPrefix(k.ID, folder+"~") || len(k.ID) == len(folder)+1 || seen[k.ID] {
				t.Fatalf("accepted %+v of %q", k, thread)
			}
			seen[k.ID] = true
		}
		// What reads is written, and reads back as itself.
		out, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, thread)
		if err != nil || len(again) != len(all) {
			t.Fatalf("written %s reads back as %+v, %v", out, again, err)
		}
		for i, k := range again {
			w := all[i]
			if k.ID != w.ID || k.Text != w.Text || !k.At.Equal(w.At) || k.Seq != w.Seq || !k.EventTime.Equal(w.EventTime) || k.ForChat != w.ForChat {
				t.Fatalf("%+v read back as %+v", w, k)
			}
		}
	})
}
