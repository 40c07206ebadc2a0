package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeMessage(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind string // request, notification, response, or the error code
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "request", 0},
		{`{"jsonrpc":"2.0","id":"a","method":"x"}`, "request", 0},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}`, "notification", 0},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, "notification", 0},
		{`{"jsonrpc":"2.0","id":7,"result":null}`, "response", 0},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, "response", 0},
		{`  {"jsonrpc":"2.0","id":7,"result":{}}` + "\n", "response", 0},
		{``, "", CodeParseError},
		{`{"jsonrpc":"2.0",`, "", CodeParseError},
		{`[]`, "", CodeInvalidRequest},
		{`"x"`, "", CodeInvalidRequest},
		{`{"id":1,"method":"x"}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":3}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":3}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","result":1}`, "", CodeInvalidRequest},
	} {
		m, err := DecodeMessage([]byte(c.in))
		if c.code != 0 {
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code {
				t.Errorf("DecodeMessage(%s) = %v, want code %d", c.in, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeMessage(%s): %v", c.in, err)
			continue
		}
		kind := map[bool]string{true: "request"}[m.IsRequest()] + map[bool]string{true: "notification"}[m.IsNotification()] + map[bool]string{true: "response"}[m.IsResponse()]
		if kind != c.kind {
			t.Errorf("DecodeMessage(%s) is a %s, want %s", c.in, kind, c.kind)
		}
	}
}

// TestEncodeRaw: params and results go out byte for byte, unknown
// members and all; only line breaks between tokens are compacted.
func TestEncodeRaw(t *testing.T) {
	params := json.RawMessage(`{"update":{"sessionUpdate":"plan_v9","entries":[{"x":1}]},"zz":"keep"}`)
	b, err := (&Message{Method: "session/update", Params: params}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, params) {
		t.Errorf("encoded %s does not hold the params as they were", b)
	}
	b, err = (&Message{ID: json.RawMessage(`"x"`), Result: json.RawMessage("{\n \"a\": 1\n}")}).Encode()
	if err != nil || bytes.ContainsAny(b, "\r\n") {
		t.Errorf("encoded %q, %v: want one line", b, err)
	}
	if _, err := (&Message{Method: "x", Params: json.RawMessage(`{`)}).Encode(); err == nil {
		t.Error("params that aren't JSON were encoded")
	}
}

// FuzzDecodeMessage: arbitrary bytes decode to a message that encodes and
// decodes again to the same, or to a clean *Error; never a panic.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"telegram:42","update":{}}}`,
		`{"jsonrpc":"2.0","id":"p","result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":1e400,"method":"x"}`, "\xff", ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeParseError && e.Code != CodeInvalidRequest) {
				t.Fatalf("error %v is not a JSON-RPC parse or invalid-request error", err)
			}
			return
		}
		out, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded message does not encode: %v", err)
		}
		m2, err := DecodeMessage(out)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", out, err)
		}
		if m2.Method != m.Method || string(m2.ID) != string(m.ID) || (m.Error == nil) != (m2.Error == nil) {
			t.Fatalf("round trip changed %s into %s", b, out)
		}
	})
}

// FuzzDecodeWithoutReflection: validID and stringMember, which read a
// message's id, jsonrpc and method without encoding/json's reflection,
// say what json.Unmarshal says of the same bytes, a value as it lies in
// a message (no space before it).
func FuzzDecodeWithoutReflection(f *testing.F) {
	for _, s := range []string{`"2.0"`, `"session/prompt"`, `1`, `-0`, `1e3`, `1.5`, `9223372036854775808`, `"a\u00e9"`, `"\u0000"`, `null`, `true`, `{}`, `"x`, ` 7 `, "\"\xff\"", "\"a\tb\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && !bytes.ContainsRune([]byte(" \t\r\n"), rune(b[0])) {
			var want bool
			if b[0] == '"' {
				var s string
				want = json.Unmarshal(b, &s) == nil
			} else {
				var n json.Number
				if json.Unmarshal(b, &n) == nil {
					_, err := n.Int64()
					want = err == nil
				}
			}
			if validID(b) != want {
				t.Errorf("validID(%q) = %v, encoding/json says %v", b, !want, want)
			}
		}
		if !json.Valid(b) {
			return // stringMember reads members of a valid message
		}
		v := bytes.TrimSpace(b)
		var want *string
		werr := json.Unmarshal(v, &want)
		got, ok, err := stringMember(v)
		if (err != nil) != (werr != nil) || err == nil && (ok != (want != nil) || ok && got != *want) {
			t.Errorf("stringMember(%q) = %q, %v, %v; encoding/json: %v, %v", v, got, ok, err, want, werr)
		}
	})
}

// BenchmarkDecodeMessage decodes the messages of one turn's connection
// as its two sides read them: requests with a method and an id, a
// notification, responses.
func BenchmarkDecodeMessage(b *testing.B) {
	msgs := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientCapabilities":{},"clientInfo":{"name":"link","version":"1"},"protocolVersion":1}}`),
		[]byte(`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"link:at-once-0","cwd":"/","mcpServers":[]}}`),
		[]byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"link:at-once-0","prompt":[{"type":"text","text":"hello"}]}}`),
		[]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"link:at-once-0","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			if _, err := DecodeMessage(m); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// writeName writes a method's name as json.Marshal does, escapes and all.
func TestWriteName(t *testing.T) {
	for _, name := range []string{MethodSessionUpdate, "_link/taken", "$/cancel_request", "a\"b", "a\\b", "<x>&", "é", "\u2028", "\x01", "\x7f", ""} {
		var b bytes.Buffer
		writeName(&b, name)
		want, _ := json.Marshal(name)
		if b.String() != string(want) {
			t.Errorf("writeName(%q) = %s, json.Marshal %s", name, b.String(), want)
		}
	}
}
