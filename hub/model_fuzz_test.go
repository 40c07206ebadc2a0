package hub

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzModelOption proves an agent's configOptions, whatever it sends,
// never panic the hub's reading of its model picker, and that a model
// matched is one of the picker's values, named by itself, after a
// provider's prefix, or by its name, and a refusal's list of them is
// bounded.
func FuzzModelOption(f *testing.F) {
	for _, s := range []struct{ options, model string }{
		{`{"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"gpt-5.5","options":[{"value":"gpt-5.5","name":"GPT-5.5"},{"value":"gpt-5.4","name":"gpt-5.4"}]}]}`, "openai/gpt-5.4"},
		{`{"configOptions":[{"id":"pick","category":"model","type":"select","currentValue":"a","options":[{"group":"g","name":"G","options":[{"value":"a","name":"A"}]}]}]}`, "A"},
		{`{"configOptions":[{"id":"m","category":"mode","type":"select","options":[]}]}`, "x"},
		{`{"configOptions":null}`, "x"},
		{`{"configOptions":[{"id":"model","category":"model","type":"boolean","currentValue":true}]}`, "true"},
		{`{"configOptions":[1,"a",{"category":"model","type":"select","id":"z","currentValue":7,"options":[null,{"value":3}]}]}`, "3"},
	} {
		f.Add([]byte(s.options), s.model)
	}
	f.Fuzz(func(t *testing.T, options []byte, model string) {
		h := newHarness(&Hub{})
		h.keepConfig("s", json.RawMessage(options))
		o, ok := h.modelOptionOf("s")
		if !ok {
			return
		}
		if o.id == "" {
			t.Fatal("a picker of no id")
		}
		if len(o.offered()) > (maxListedModels+1)*70 {
			t.Fatalf("a refusal lists %d bytes", len(o.offered()))
		}
		v, ok := o.match(model)
		if !ok {
			return
		}
		_, bare, _ := strings.Cut(model, "/")
		for _, w := range o.values {
			if w.value == v && (v == model || v == bare || strings.EqualFold(w.name, model)) {
				return
			}
		}
		t.Fatalf("%q matched %q, no value of %+v named so", model, v, o.values)
	})
}
