//go:build !race

// Allocation counts are the race detector's own under -race: this runs without it.

package acp

import "testing"

// Reading a turn's messages allocates the *Message alone: the keys,
// the version and the turn's methods are read as strings of their own
// (common), a missing error costs no target, a string member no pointer.
func TestDecodeMessageAllocs(t *testing.T) {
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientCapabilities":{},"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"link:a","cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"link:a","prompt":[{"type":"text","text":"hello"}]}}`,
		`{"jsonrpc":"2.0","method":"_link/taken","params":{"sessionId":"link:a"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"link:a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
	}
	for _, m := range msgs {
		b := []byte(m)
		if allocs := testing.AllocsPerRun(100, func() {
			if _, err := DecodeMessage(b); err != nil {
				t.Fatal(err)
			}
		}); allocs != 1 {
			t.Errorf("DecodeMessage(%.60s…) made %v allocations, want 1", m, allocs)
		}
	}
	// A method nobody names often is read as a copy, the same.
	m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"x/rare","params":{}}`))
	if err != nil || m.Method != "x/rare" {
		t.Fatalf("DecodeMessage = %+v, %v", m, err)
	}
}

// Encoding a turn's notification allocates its bytes alone, its method's
// name written as json.Marshal would write it (writeName).
func TestEncodeAllocs(t *testing.T) {
	m := &Message{Method: MethodSessionUpdate, Params: []byte(`{"sessionId":"link:a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}`)}
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := m.Encode(); err != nil {
			t.Fatal(err)
		}
	}); allocs != 1 {
		t.Errorf("Encode made %v allocations, want 1", allocs)
	}
}
