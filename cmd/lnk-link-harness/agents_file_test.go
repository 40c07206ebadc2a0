package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAgents(t *testing.T) {
	got, err := parseAgents([]byte(`# the owner's agents
{"name":"main","id":"01HZ","home":"/srv/link","port":18800,"key_file":"/k/main"}

{"name":"work","home":"/srv/link","port":18801,"key_file":"/k/work","env":{"LNK_MEMORY":"http://127.0.0.1:9/mcp"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []agentLine{
		{Name: "main", ID: "01HZ", Home: "/srv/link", Port: 18800, KeyFile: "/k/main"},
		{Name: "work", Home: "/srv/link", Port: 18801, KeyFile: "/k/work", Env: map[string]string{"LNK_MEMORY": "http://127.0.0.1:9/mcp"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("agents (-want +got):\n%s", diff)
	}
	const ok = `{"name":"a","home":"/h","port":1,"key_file":"/k"}`
	for _, c := range []struct{ file, why string }{
		{"", "no agents"},
		{"# only a comment\n", "no agents"},
		{`{"name":"A","home":"/h","port":1,"key_file":"/k"}`, "line 1: name:"},
		{`{"name":"a","home":"h","port":1,"key_file":"/k"}`, "home is an absolute folder"},
		{`{"name":"a","home":"/h","port":70000,"key_file":"/k"}`, "port is 0"},
		{`{"name":"a","home":"/h","port":1}`, "key_file"},
		{`{"name":"a","id":"a b","home":"/h","port":1,"key_file":"/k"}`, "id:"},
		{`{"name":"a","home":"/h","port":1,"key_file":"/k","keyfile":"/x"}`, "unknown field"},
		{`{"name":"a","home":"/h","port":1,"key_file":"/k"} {}`, "one JSON object a line"},
		{`{"name":"a","home":"/h","port":1,"key_file":"/k","env":{"A=B":"x"}}`, "env:"},
		{`["a"]`, "not an agent's JSON object"},
		{ok + "\n" + ok, "line 2: agent \"a\" is on an earlier line"},
		{ok + "\n" + `{"name":"b","home":"/h","port":1,"key_file":"/k"}`, "port 1 is another agent's"},
		{`{"name":"a","id":"x","home":"/h","port":1,"key_file":"/k"}` + "\n" + `{"name":"b","id":"x","home":"/h","port":2,"key_file":"/k"}`, "ID \"x\" is another agent's"},
		{strings.Repeat(" ", maxAgentsFile+1), "over"},
	} {
		if _, err := parseAgents([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%.80q: %v, want a refusal saying %q", c.file, err, c.why)
		}
	}
	// Ports 0 (a free one each) may repeat.
	if got, err := parseAgents([]byte(strings.ReplaceAll(ok, `"port":1`, `"port":0`) + "\n" + strings.ReplaceAll(strings.ReplaceAll(ok, `"port":1`, `"port":0`), `"a"`, `"b"`))); err != nil || len(got) != 2 {
		t.Fatalf("two free ports: %+v, %v", got, err)
	}
}

// An agents file is outside input: whatever it holds, it is read or
// refused, and what is read follows every rule.
func FuzzParseAgents(f *testing.F) {
	f.Add([]byte(`{"name":"main","id":"01HZ","home":"/srv/link","port":18800,"key_file":"/k/main","env":{"A":"b"}}`))
	f.Add([]byte("# x\n{\"name\":\"a\",\"home\":\"/h\",\"port\":0,\"key_file\":\"/k\"}\n{\"name\":\"b\",\"home\":\"/h\",\"port\":0,\"key_file\":\"/k\"}"))
	f.Add([]byte(`{"name":"a","home":"/h","port":-1,"key_file":"/k"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseAgents(b)
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, a := range got {
			if names[a.Name] || a.Port < 0 || a.Port > 65535 || a.Home == "" || a.Home[0] != '/' || a.KeyFile == "" {
				t.Fatalf("read %+v", got)
			}
			names[a.Name] = true
		}
	})
}

// With --agents, the flags of one agent are the file's: given, they are
// refused; the key file isn't needed.
func TestParseFlagsAgents(t *testing.T) {
	env := map[string]string{"LNK_AGENT": "work", "LNK_KEY_FILE": "/k"}
	if err := NewMain(&syncBuffer{}, &syncBuffer{}, env).ParseFlags([]string{"serve", "--agents", "/a", "--model", "offline"}); err != nil {
		t.Fatal(err)
	}
	if err := NewMain(&syncBuffer{}, &syncBuffer{}, nil).ParseFlags([]string{"serve", "--agents", "/a"}); err != nil {
		t.Fatalf("without a key file: %v", err)
	}
	for _, flag := range []string{"--agent", "--agent-id", "--key-file", "--port"} {
		err := NewMain(&syncBuffer{}, &syncBuffer{}, nil).ParseFlags([]string{"serve", "--agents", "/a", flag, "1"})
		if err == nil || !strings.Contains(err.Error(), flag+" is each agent's line's") {
			t.Errorf("--agents with %s: %v", flag, err)
		}
	}
}
