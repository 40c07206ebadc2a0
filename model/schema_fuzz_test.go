package model

import (
	"encoding/json"
	"testing"
)

// FuzzInputSchema proves a tool's input schema, as an MCP server lists
// it, never panics InputSchema, and is sent as a JSON object with a type:
// the schema itself when it is an object, else {"type":"object"}.
func FuzzInputSchema(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"type":"object","properties":{"q":{"type":"string"}}}`, `{"type":null}`, `[]`, `null`, `"x"`, `{"a":1}{`, `{"type":"object"} `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		m := Tool{Name: "a__b", Schema: schema}.InputSchema()
		if _, ok := m["type"]; !ok {
			t.Fatalf("%q sent with no type: %v", schema, m)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%q sent as no JSON: %v", schema, err)
		}
		var given map[string]any
		if json.Unmarshal([]byte(schema), &given) == nil && given != nil {
			want := len(given)
			if _, typed := given["type"]; !typed {
				want++ // "type":"object" added
			}
			var sent map[string]any
			if json.Unmarshal(b, &sent) != nil || len(sent) != want {
				t.Fatalf("%q sent as %s", schema, b)
			}
		} else if string(b) != `{"type":"object"}` {
			t.Fatalf("%q, no object, sent as %s", schema, b)
		}
	})
}
