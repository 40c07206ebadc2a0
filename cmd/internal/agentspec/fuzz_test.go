package agentspec

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse: any bytes are a spec read or refused by an *Error, never a
// panic; a spec read is config.json as valid JSON whose every key is a
// table of the spec.
func FuzzParse(f *testing.F) {
	for _, s := range []string{full, "", "[model]\nname = \"x\"\nfallback = [\"y\"]\n", "[window]\ncompact_at = nan\n",
		"[instructions]\nnotes = { max = 4096, file = \"a\" }\n", "[tool.\"a.b\"]\nx = [1, 2.5, {y = inf}]\n", "a.b.c = 1\n[[x]]\n"} {
		f.Add([]byte(s))
	}
	tables := map[string]bool{"id": true, "model": true, "storage": true, "chat": true, "window": true, "instructions": true,
		"tools": true, "tool": true, "connections": true, "run": true, "scheduler": true}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v is no *Error", err, err)
			}
			return
		}
		out, err := p.Config()
		if err != nil {
			t.Fatalf("a spec read gives no config.json: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("config.json %s: %v", out, err)
		}
		for k := range m {
			if !tables[k] {
				t.Fatalf("config.json has %q", k)
			}
		}
	})
}
