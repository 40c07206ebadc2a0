package endpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzRoute: any Link-Agent and Link-Agent-Id route to an agent of that
// name (and that ID, when one is given and the agent's is known), or are
// refused with one of the two sentinels; never a panic, never another
// agent.
func FuzzRoute(f *testing.F) {
	for _, s := range [][2]string{{"", ""}, {"main", ""}, {"shared", ""}, {"shared", "owner-a/shared"}, {"solo", "owner-b/shared"}, {"Main", ""}, {"../x", "\x00"}, {strings.Repeat("a", 65), ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, id string) {
		a, err := Route(testAgents, "", name, id)
		if err != nil {
			if !errors.Is(err, ErrUnknownAgent) && !errors.Is(err, ErrAgentShared) {
				t.Fatalf("route %q %q: %v is neither sentinel", name, id, err)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("route's error echoes too much: %d bytes", len(err.Error()))
			}
			return
		}
		want := name
		if want == "" {
			want = contract.DefaultAgent
		}
		if a.Name != want || (id != "" && a.ID != id && a.ID != "") {
			t.Fatalf("route %q %q gave %+v", name, id, a)
		}
	})
}

// FuzzParseURL: any URL is refused cleanly or gives a host with a port and
// a path starting with '/'.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:18800/acp", "ws://localhost:1", "http://[::1]:80/a?b=c", "https://x:1", "http://x", "", "http://:0/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, path, err := parseURL(s)
		if err != nil {
			return
		}
		if host == "" || !strings.Contains(host, ":") || !strings.HasPrefix(path, "/") {
			t.Fatalf("parseURL(%q) = %q %q", s, host, path)
		}
	})
}
