package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/store"
)

// lnk-link-harness endpoint prints the address as a JSON string: at
// --port, else $LNK_PORT, else 18800; a bad port is refused naming it.
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
	}{{[]string{"--port", "70000"}, nil}, {nil, map[string]string{"LNK_PORT": "x"}}, {[]string{"word"}, nil}} {
		var out, errb bytes.Buffer
		if code := runEndpoint(bad.args, bad.env, &out, &errb); code != 2 || out.Len() != 0 || errb.Len() == 0 {
			t.Errorf("endpoint %q with %v: exit %d, %q, %q; want a refusal", bad.args, bad.env, code, out.String(), errb.String())
		}
	}
	var errb bytes.Buffer
	if code := runEndpoint([]string{"--port", "70000"}, nil, &bytes.Buffer{}, &errb); code != 2 || !strings.Contains(errb.String(), "LNK_PORT") {
		t.Errorf("a bad port's refusal: %q", errb.String())
	}
}

// With --agents, the address is at the agent's port in the file.
func TestEndpointOfAgents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents")
	file := `{"name":"main","home":"/h","port":18810,"key_file":"/k"}` + "\n" + `{"name":"work","home":"/h","port":18811,"key_file":"/k"}` + "\n" + `{"name":"free","home":"/h","port":0,"key_file":"/k"}` + "\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--agents", path}, nil, `"http://127.0.0.1:18810/acp"` + "\n"},
		{[]string{"--agents", path, "--agent", "work"}, nil, `"http://127.0.0.1:18811/acp"` + "\n"},
		{[]string{"--agents", path}, map[string]string{"LNK_AGENT": "work", "LNK_PORT": "1"}, `"http://127.0.0.1:18811/acp"` + "\n"},
	} {
		var out, errb bytes.Buffer
		if code := runEndpoint(c.args, c.env, &out, &errb); code != 0 || out.String() != c.want {
			t.Errorf("endpoint %q with %v: exit %d, %q (%s); want %q", c.args, c.env, code, out.String(), errb.String(), c.want)
		}
	}
	for _, args := range [][]string{{"--agents", path, "--agent", "none"}, {"--agents", path, "--agent", "free"}, {"--agents", path + ".absent"}} {
		var out, errb bytes.Buffer
		if code := runEndpoint(args, nil, &out, &errb); code != 2 || out.Len() != 0 {
			t.Errorf("endpoint %q: exit %d, %q; want a refusal", args, code, out.String())
		}
	}
}

// dialAs opens a connection to url naming agent and id, and says how it
// went: nil, or the dial's error.
func dialAs(t *testing.T, url, agent, id string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: []byte(testKey), Agent: agent, AgentID: id})
	if err == nil {
		conn.CloseNow()
	}
	return err
}

// A single agent takes its ID from --agent-id, else config.json's "id":
// a Link-Agent-Id that is its ID is answered, another is refused 404, and
// none at all is answered by name.
func TestAgentID(t *testing.T) {
	home := t.TempDir()
	m, _, stop := start(t, home, "--agent-id", "id-one")
	for _, c := range []struct {
		agent, id string
		want      error
	}{
		{"main", "id-one", nil},
		{"", "id-one", nil},
		{"main", "", nil},
		{"main", "id-two", endpoint.ErrUnknownAgent},
		{"other", "id-one", endpoint.ErrUnknownAgent},
	} {
		if err := dialAs(t, m.URL(), c.agent, c.id); !errors.Is(err, c.want) {
			t.Errorf("Link-Agent %q, Link-Agent-Id %q: %v, want %v", c.agent, c.id, err, c.want)
		}
	}
	stop()

	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Config(), []byte(`{"id":"from-config"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m, _, _ = start(t, home)
	if err := dialAs(t, m.URL(), "main", "from-config"); err != nil {
		t.Errorf("config.json's ID: %v", err)
	}
	if err := dialAs(t, m.URL(), "main", "id-one"); !errors.Is(err, endpoint.ErrUnknownAgent) {
		t.Errorf("another ID: %v, want a 404", err)
	}
}
