package openai

import (
	"encoding/json"
	"testing"
)

// FuzzArguments proves a tool call's input, as the model wrote it, never
// panics Arguments, and is sent as a JSON object: the input as written
// when it is one, else {}.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"q":"x"}`, `null`, `[]`, `{"q":1}{}`, ` {"q":"\u00e9"} `, "{\"q\":\"\xff\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got := Arguments(input)
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(got), &m) != nil || m == nil {
			t.Fatalf("%q sent as %q, no object", input, got)
		}
		if got != input && got != "{}" {
			t.Fatalf("%q sent as %q", input, got)
		}
	})
}
