package main

import (
	"bytes"
	"testing"
)

// TestEndpointCommand: lnk-acp endpoint prints the address it serves at
// as a JSON string, at --port, else $LNK_PORT, else 18800; a bad port or
// a word is refused, printing nothing.
func TestEndpointCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, `"http://127.0.0.1:18800/acp"` + "\n"},
		{nil, map[string]string{"LNK_PORT": "18901"}, `"http://127.0.0.1:18901/acp"` + "\n"},
		{[]string{"--port", "9000"}, map[string]string{"LNK_PORT": "18901"}, `"http://127.0.0.1:9000/acp"` + "\n"},
	} {
		var out, errb bytes.Buffer
		if code := runEndpoint(c.args, c.env, &out, &errb); code != 0 || out.String() != c.want {
			t.Errorf("endpoint %q with %v: exit %d, %q (%s); want %q", c.args, c.env, code, out.String(), errb.String(), c.want)
		}
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
	}{{[]string{"--port", "70000"}, nil}, {[]string{"--port", "0"}, nil}, {nil, map[string]string{"LNK_PORT": "x"}}, {[]string{"word"}, nil}} {
		var out, errb bytes.Buffer
		if code := runEndpoint(bad.args, bad.env, &out, &errb); code != 2 || out.Len() != 0 || errb.Len() == 0 {
			t.Errorf("endpoint %q with %v: exit %d, %q, %q; want a refusal", bad.args, bad.env, code, out.String(), errb.String())
		}
	}
}
