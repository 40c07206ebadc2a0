package model

import (
	"encoding/json"
	"testing"
)

// A tool's schema goes to a provider as an object with a type: as given,
// typed object where it says no type, {"type":"object"} when empty or not
// an object.
func TestInputSchema(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `{"type":"object"}`},
		{`not json`, `{"type":"object"}`},
		{`[1,2]`, `{"type":"object"}`},
		{`null`, `{"type":"object"}`},
		{`{"properties":{"q":{"type":"string"}}}`, `{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{`{"type":"object","required":["q"]}`, `{"required":["q"],"type":"object"}`},
	} {
		b, err := json.Marshal(Tool{Name: "a__b", Schema: c.in}.InputSchema())
		if err != nil || string(b) != c.want {
			t.Errorf("InputSchema(%q) = %s, %v; want %s", c.in, b, err, c.want)
		}
	}
}
