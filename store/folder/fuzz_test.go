package folder_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

func FuzzParseTools(f *testing.F) {
	for _, s := range []string{`[]`, `["memory__search","file__read"]`, `null`, `["../x"]`, `[1]`, `{"a":1}`, `["a","a"]`, ``, `[""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tools, err := store.ParseTools(b)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("refusal isn't ErrCorrupt: %v", err)
			}
			return
		}
		if tools == nil || len(*tools) > contract.MaxTools {
			t.Fatalf("accepted %v", tools)
		}
		for _, name := range *tools {
			if contract.CheckToolName(name) != nil {
				t.Fatalf("accepted the name %q", name)
			}
		}
		// What it reads, written again, reads the same.
		again, _ := json.Marshal(*tools)
		back, err := store.ParseTools(again)
		if err != nil || strings.Join(*back, ",") != strings.Join(*tools, ",") {
			t.Fatalf("round trip: %v, %v", back, err)
		}
	})
}
