package acp

import (
	"bytes"
	"testing"
)

// FuzzProbeID proves a message a peer sent that isn't a valid one never
// panics probeID, and that an id it finds is a string or an integer that
// the error answer carries back as sent, read again as the same id.
func FuzzProbeID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"x","params":1}`, `{"id":"a\u0000","method":null}`, `{"id":"a","method":"m","jsonrpc":"1.0"}`, `{"id":1.5,"method":"m"}`, `{"id":null,"method":"m"}`, `{"id":{"a":1},"method":"m"}`, `{"ID":2,"Method":"m"}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id := probeID(b)
		if id == nil {
			return
		}
		if !validID(id) {
			t.Fatalf("%s: id %s is no string or integer", b, id)
		}
		out, err := (&Message{ID: id, Error: Errorf(CodeInvalidRequest, "bad")}).Encode()
		if err != nil {
			t.Fatalf("answer to id %s not written: %v", id, err)
		}
		m, err := DecodeMessage(out)
		if err != nil || !bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(id)) {
			t.Fatalf("answer %s to id %s read as %+v, %v", out, id, m, err)
		}
	})
}
