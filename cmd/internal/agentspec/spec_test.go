package agentspec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// full is a spec with every table.
const full = `# the agent's spec
id = "01HZX3K9QF"

[model]
name = "anthropic/claude-opus-5-5"
fallbacks = ["openai/gpt-6-luna", "fast"]
answer = 8192

[model.aliases]
fast = "anthropic/claude-haiku-5"

[storage]
conversations = "compact"

[chat]
verbose = true

[window]
max = 100_000
compact_at = "never"
save_notes = false
answer = 0.1
margin = 0
unknown = 65536

[instructions]
persona = "instructions/persona.md"
now = "none"
notes = { max = 4096 }

[instructions.repository]
depth = 3

[tools]
timeout = 30

[tool.web]
max_bytes = 1048576
allow = ["example.com"]
since = 2026-12-01

[connections]
activity = true
[connections.telegram]

[run]
timeout = 60
network = true
env = { GOFLAGS = "-mod=mod" }
read = ["/home/me/go"]
[run.limits]
memory = 4294967296
[run.background]
max_running = 4

[scheduler]
zone = "Europe/Paris"
max_tasks = 4
`

// TestConfig: every table of a spec is config.json's of the same name,
// its keys as config.json's readers take them, and what the spec leaves
// out is left out.
func TestConfig(t *testing.T) {
	b := configOf(t, full)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	const want = `{
 "id": "01HZX3K9QF",
 "model": {"name": "anthropic/claude-opus-5-5", "aliases": {"fast": "anthropic/claude-haiku-5"}, "fallbacks": ["openai/gpt-6-luna", "fast"], "answer": 8192},
 "storage": {"conversations": "compact"},
 "chat": {"verbose": true},
 "window": {"max": 100000, "compact_at": "never", "save_notes": false, "answer": 0.1, "margin": 0, "unknown": 65536},
 "instructions": {"persona": "instructions/persona.md", "now": "none", "notes": {"max": 4096}, "repository": {"depth": 3}},
 "tools": {"timeout": 30},
 "tool": {"web": {"max_bytes": 1048576, "allow": ["example.com"], "since": "2026-12-01"}},
 "connections": {"activity": true, "telegram": {}},
 "run": {"timeout": 60, "network": true, "env": {"GOFLAGS": "-mod=mod"}, "read": ["/home/me/go"], "limits": {"memory": 4294967296}, "background": {"max_running": 4}},
 "scheduler": {"zone": "Europe/Paris", "max_tasks": 4}
}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, got); d != "" {
		t.Fatalf("config.json (-want +got):\n%s\n%s", d, b)
	}

	empty, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := empty.Config(); string(b) != "{}\n" {
		t.Fatalf("an empty spec's config.json is %s", b)
	}
}

// TestRefused: a misspelled key, a key in the wrong table, a value of
// the wrong type and a file that isn't TOML are each refused by their
// line and key, saying what is wanted.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		want       []string // each in the error
	}{
		{"misspelled", "[model]\nname = \"x\"\nfallback = [\"y\"]\n", []string{"line 3: model.fallback: no such key"}},
		{"two misspelled", "[window]\nmax = 2048\nmaxx = 3\n\n[modle]\nname = \"x\"\n", []string{"line 3: window.maxx: no such key", "line 5: modle: no such key"}},
		{"wrong table", "[storage]\nmax = 4096\n", []string{"line 2: storage.max: no such key"}},
		{"top level", "name = \"x\"\n", []string{"line 1: name: no such key"}},
		{"string for integer", "[model]\nname = \"x\"\n\n[window]\nmax = \"big\"\n", []string{"line 5: window.max: a TOML string where an integer is wanted"}},
		{"string for array", "[model]\nfallbacks = \"openai/gpt-6-luna\"\n", []string{"line 2: model.fallbacks: a TOML string where an array of strings is wanted"}},
		{"integer alias", "[model.aliases]\nfast = 3\n", []string{"line 2: model.aliases.fast:", "integer"}},
		{"boolean", "[chat]\nverbose = \"yes\"\n", []string{"line 2: chat.verbose: a TOML string where true or false is wanted"}},
		{"tool not a table", "[tool]\nweb = 3\n", []string{"line 2: tool.web: a TOML integer where a table is wanted"}},
		{"compact_at", "[window]\n\ncompact_at = true\n", []string{"line 3: window.compact_at:", `"never"`}},
		{"section", "[instructions]\npersona = 3\n", []string{"line 2: instructions.persona:"}},
		{"section key", "[instructions]\nnotes = { max = 4096, maxx = 1 }\n", []string{"line 2: instructions.notes.maxx: no such key of a section"}},
		{"section type", "[instructions.notes]\nmax = \"4k\"\n", []string{"line 2: instructions.notes.max: an integer is wanted"}},
		{"nan", "[tool.web]\nratio = nan\n", []string{"line 2: tool.web.ratio:", "JSON"}},
		{"run", "[run.limits]\nmemory = 1\nprocess = 2\n", []string{"line 3: run.limits.process: no such key"}},
		{"syntax", "[model]\nname = \n", []string{"line 2:"}},
		{"quoted", "[tool]\n\"a b\" = 1\n", []string{"line 2: tool.\"a b\":"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.spec))
			if err == nil {
				t.Fatal("taken")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v is no *Error", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q says nothing of %q", err, w)
				}
			}
		})
	}
}

// TestLine: a key's line is its own, an inline table's key its line, and
// a key the spec doesn't write its nearest table's.
func TestLine(t *testing.T) {
	p, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{
		"id": 2, "model": 4, "model.name": 5, "model.aliases.fast": 10, "window.max": 19,
		"instructions.notes.max": 29, "instructions.repository.depth": 32, "tool.web": 37,
		"window.nothing": 18, "nothing": 0, "run.env.GOFLAGS": 49,
	} {
		if got := p.Line(key); got != want {
			t.Errorf("%s on line %d, want %d", key, got, want)
		}
	}
}

// configOf is spec's config.json, the spec read.
func configOf(t *testing.T, spec string) []byte {
	t.Helper()
	p, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
