package delivery

import (
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`,
		`[{"id":"telegram-1~abc","thread":"telegram:1","text":"hi","kept":"2026-11-30T09:15:00Z","seq":4}]`,
		`[{"id":"telegram-2~abc","thread":"telegram:1","text":"hi","kept":"2026-11-30T09:15:00Z"}]`,
		`[{"id":"telegram-1~a","thread":"telegram:1"},{"id":"telegram-1~a","thread":"telegram:1"}]`,
		`[{"id":"telegram-1~","thread":"telegram:1"}]`,
		`[{"thread":"telegram:1","kept":"yesterday"}]`, `{`, `[1,2]`,
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
	})
}
