package conformance

import (
	"encoding/json"
	"testing"
)

func TestSessionUpdate(t *testing.T) {
	for _, c := range []struct {
		raw     string
		ok      bool
		session string
		kind    string
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"link:a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, true, "link:a", "agent_message_chunk"},
		{`{"jsonrpc":"2.0","id":3,"method":"session/update","params":{"sessionId":"link:a","update":{}}}`, false, "", ""},
		{`{"jsonrpc":"2.0","method":"_link/taken","params":{"sessionId":"link:a"}}`, false, "", ""},
		{`{"jsonrpc":"2.0","method":"session/update","params":[1]}`, false, "", ""},
	} {
		var m msg
		if err := json.Unmarshal([]byte(c.raw), &m); err != nil {
			t.Fatal(err)
		}
		sid, u, ok := m.sessionUpdate()
		if ok != c.ok || sid != c.session || u.SessionUpdate != c.kind {
			t.Errorf("%s: got %v %q %q", c.raw, ok, sid, u.SessionUpdate)
		}
	}
}

func TestEmptyAnswers(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"answers": []}`:               true,
		`{"answers":[ ]}`:               true,
		`{"answers": null}`:             false,
		`{}`:                            false,
		`{"answers": [{"thread":"x"}]}`: false,
		`[]`:                            false,
	} {
		if got := emptyAnswers(json.RawMessage(raw)); got != want {
			t.Errorf("%s: got %v, want %v", raw, got, want)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	for s, ok := range map[string]bool{
		"http://127.0.0.1:18800/acp": true,
		"http://127.0.0.1:18800":     true,
		"http://[::1]:18800/acp":     true,
		"https://127.0.0.1:18800":    false,
		"http://127.0.0.1/acp":       false,
		"127.0.0.1:18800":            false,
		"":                           false,
	} {
		u, err := parseEndpoint(s)
		if (err == nil) != ok {
			t.Errorf("%q: got %v, want ok %v", s, err, ok)
		}
		if err == nil && u.Path == "" {
			t.Errorf("%q: no path", s)
		}
	}
}

// FuzzMessage: whatever an endpoint sends, reading it never panics, and
// what reads as a session/update is a notification.
func FuzzMessage(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"link:a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"memory__search"}}}`)
	f.Add(`{"jsonrpc":"2.0","id":"1","result":{"answers":[]}}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"from: no"}}`)
	f.Add(`{"method":"session/update","params":{"update":{"title":null}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var m msg
		if json.Unmarshal([]byte(raw), &m) != nil {
			return
		}
		if _, _, ok := m.sessionUpdate(); ok && !m.isNotification() {
			t.Fatal("a session/update with an id read as a notification")
		}
		_ = describe([]msg{m})
		_ = emptyAnswers(m.Result)
	})
}

func FuzzParseEndpoint(f *testing.F) {
	f.Add("http://127.0.0.1:18800/acp")
	f.Add("http://[::1]:1")
	f.Add("http://h:1/%zz")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseEndpoint(s)
		if err == nil && (u.Scheme != "http" || u.Port() == "" || u.Path == "") {
			t.Fatalf("%q: accepted %v", s, u)
		}
	})
}
