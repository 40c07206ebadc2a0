package redact

import (
	"strings"
	"testing"
)

// Address takes the address and each part that may carry its secret out
// of text, and keeps the rest: a tool's short name and "mcp" stay.
func TestAddress(t *testing.T) {
	const secret = "q5Zt0cR1n8w-Vx3kLmP2sYb7HdJf9GaUeQoT4iNlE6c"
	addr := "http://user:pw@127.0.0.1:9/mcp/" + secret + "?k=v2"
	for _, c := range []struct{ in, want string }{
		{"json-rpc error -32603: dial " + addr + ": refused", "json-rpc error -32603: dial <address>: refused"},
		{"POST 127.0.0.1:9/mcp/" + secret + " failed", "POST <address> failed"},
		{`"http:\/\/127.0.0.1:9\/mcp\/` + secret + `"`, `"http:\/\/127.0.0.1:9\/mcp\/<address>"`},
		{"the secret " + secret + " alone", "the secret <address> alone"},
		{"query k=v2 and user:pw", "query <address> and <address>"},
		{"the tool mcp memory answered", "the tool mcp memory answered"},
	} {
		if got := Address(c.in, addr); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	if got := Address("text", ""); got != "text" {
		t.Errorf("no address: %q", got)
	}
	if got := Addresses("a "+addr+" b http://127.0.0.1:10/x/"+strings.Repeat("s", 16), addr, "http://127.0.0.1:10/x/"+strings.Repeat("s", 16)); got != "a <address> b <address>" {
		t.Errorf("two addresses: %q", got)
	}
}

// Whatever the text, what Address gives holds no long segment of the
// address's path.
func FuzzAddress(f *testing.F) {
	f.Add("dial http://127.0.0.1:9/mcp/q5Zt0cR1n8w-Vx3kLmP2sYb7HdJf9GaUeQoT4iNlE6c: refused", "http://127.0.0.1:9/mcp/q5Zt0cR1n8w-Vx3kLmP2sYb7HdJf9GaUeQoT4iNlE6c")
	f.Add("x", "::not a url")
	f.Fuzz(func(t *testing.T, text, addr string) {
		got := Address(text, addr)
		if addr != "" && strings.Contains(got, addr) && !strings.Contains(Hidden, addr) {
			t.Fatalf("%q left in %q", addr, got)
		}
	})
}
