package serve

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	prompts "github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

func TestSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{"model":{"name":"anthropic/claude-x","aliases":{"fast":"anthropic/claude-y"},"fallbacks":["openai/gpt-6-luna","fast"],"answer":900},"storage":{"conversations":"compact"},"chat":{"verbose":false},"other":1}`), "")
	if err != nil {
		t.Fatal(err)
	}
	off := false
	want := harness.Settings{
		Model:         "anthropic/claude-x",
		Aliases:       map[string]string{"fast": "anthropic/claude-y"},
		Fallbacks:     []string{"openai/gpt-6-luna", "fast"},
		Conversations: "compact",
		Verbose:       &off,
		MaxTokens:     900,
		Window:        window.Defaults(),
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("settings (-want +got):\n%s", diff)
	}
	if s, _ := ParseSettings([]byte(`{"model":{"name":"a/b"}}`), "offline"); s.Model != "offline" {
		t.Fatalf("--model doesn't win: %+v", s)
	}
	for _, bad := range []string{`[`, `{"storage":{"conversations":"Bad!"}}`, `{"model":{"answer":-1}}`, `{"model":"x"}`, `{"model":{"fallbacks":"a/b"}}`, `{"model":{"fallbacks":["a/b",""]}}`} {
		if _, err := ParseSettings([]byte(bad), ""); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	for _, bad := range []string{`{"tools":[1]}`, `{"tools":"x"}`, `{"tool":{"web":3}}`, `{"tool":[]}`, `{"tool":{"Web":{}}}`, `{"tool":{"a__b":{}}}`, `{"tool":{"web":{"x":1},"":{}}}`} {
		_, err := ParseSettings([]byte(bad), "")
		if err == nil || !strings.Contains(err.Error(), "config.json: tool") {
			t.Errorf("%s: %v, want a refusal naming the table", bad, err)
		}
	}
	p, _ := store.For(t.TempDir(), "main")
	if s, err := ReadSettings(t.Context(), p, ""); err != nil || s.Model != "" {
		t.Fatalf("a missing config.json: %+v, %v", s, err)
	}
}

// The spec's [tools] and [tool.<name>] tables: each tool named has its
// own over [tools], merged key by key; any other tool has [tools] alone.
func TestToolSpecs(t *testing.T) {
	for _, c := range []struct {
		config     string
		all        string            // [tools] as kept, "" for none
		each       map[string]string // by tool, merged
		web, other string            // Settings.ToolSpec of web and of a tool not named
	}{
		{`{}`, "", nil, "", ""},
		{`{"tools":null,"tool":null}`, "", nil, "", ""},
		{`{"tools":{"timeout":30,"proxy":"on"}}`, `{"proxy":"on","timeout":30}`, nil, `{"proxy":"on","timeout":30}`, `{"proxy":"on","timeout":30}`},
		{`{"tools":{"t":1},"tool":{"web":null}}`, `{"t":1}`, nil, `{"t":1}`, `{"t":1}`},
		{`{"tool":{"web":{"max_bytes":100}}}`, "", map[string]string{"web": `{"max_bytes":100}`}, `{"max_bytes":100}`, ""},
		{
			`{"tools":{"timeout":30,"proxy":"on"},"tool":{"web":{"timeout":5,"max_bytes":100},"memory":{}}}`,
			`{"proxy":"on","timeout":30}`,
			map[string]string{"web": `{"max_bytes":100,"proxy":"on","timeout":5}`, "memory": `{"proxy":"on","timeout":30}`},
			`{"max_bytes":100,"proxy":"on","timeout":5}`, `{"proxy":"on","timeout":30}`,
		},
		{`{"tools":{"deep":{"a":1,"b":2}},"tool":{"web":{"deep":{"a":3}}}}`, `{"deep":{"a":1,"b":2}}`, map[string]string{"web": `{"deep":{"a":3}}`}, `{"deep":{"a":3}}`, `{"deep":{"a":1,"b":2}}`},
	} {
		s, err := ParseSettings([]byte(c.config), "")
		if err != nil {
			t.Errorf("%s: %v", c.config, err)
			continue
		}
		if string(s.ToolsSpec) != c.all || len(s.ToolSpecs) != len(c.each) {
			t.Errorf("%s: [tools] %s, %d tools' tables; want %s, %d", c.config, s.ToolsSpec, len(s.ToolSpecs), c.all, len(c.each))
		}
		for name, want := range c.each {
			if got := string(s.ToolSpecs[name]); got != want {
				t.Errorf("%s: %s's table %s, want %s", c.config, name, got, want)
			}
		}
		if got := string(s.ToolSpec("web")); got != c.web {
			t.Errorf("%s: web's spec %s, want %s", c.config, got, c.web)
		}
		if got := string(s.ToolSpec("other")); got != c.other {
			t.Errorf("%s: another tool's spec %s, want %s", c.config, got, c.other)
		}
	}
}

// FuzzSettings proves config.json's reader never panics and that what it
// accepts keeps conversations a way the store names.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(`{"model":{"name":"a/b","aliases":{"x":"y"}},"storage":{"conversations":"log"}}`), "")
	f.Add([]byte(`{"chat":{"verbose":true}}`), "offline")
	f.Add([]byte(`{"tools":{"t":1},"tool":{"web":{"t":2,"u":[1]},"memory":null}}`), "")
	f.Add([]byte(`{"instructions":{"base":"b.md","now":"none","repository":{"depth":2,"max":10}},"connections":{"slack":{}}}`), "")
	f.Fuzz(func(t *testing.T, b []byte, model string) {
		s, err := ParseSettings(b, model)
		if err != nil {
			return
		}
		if err := s.Instructions.Validate(); err != nil {
			t.Fatalf("accepted instructions that don't validate: %v", err)
		}
		if s.Conversations != "" && driver.CheckName(s.Conversations) != nil || s.MaxTokens < 0 {
			t.Fatalf("accepted %+v", s)
		}
		if model != "" && s.Model != model {
			t.Fatal("--model lost")
		}
		for name, spec := range s.ToolSpecs {
			var m map[string]json.RawMessage
			if json.Unmarshal(spec, &m) != nil || m == nil || !toolName(name) {
				t.Fatalf("tool %q's table %s is not an object of a tool's name", name, spec)
			}
		}
		if s.ToolsSpec != nil && (len(s.ToolsSpec) == 0 || s.ToolsSpec[0] != '{') {
			t.Fatalf("[tools] %s is not an object", s.ToolsSpec)
		}
	})
}

// The agent's ID is config.json's "id": none when the file or the key is
// absent, refused naming the key when it isn't an ID.
func TestReadAgentID(t *testing.T) {
	p, _ := store.For(t.TempDir(), "main")
	if id, err := ReadAgentID(p); err != nil || id != "" {
		t.Fatalf("no config.json: %q, %v", id, err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, id, err string }{
		{`{}`, "", ""},
		{`{"id":"01HZX3K9QF","model":{"name":"offline"}}`, "01HZX3K9QF", ""},
		{`{"id":"a b"}`, "", "config.json: id:"},
		{`{"id":3}`, "", "config.json:"},
	} {
		if err := os.WriteFile(p.Config(), []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		id, err := ReadAgentID(p)
		if id != c.id || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %q, %v; want %q, error %q", c.file, id, err, c.id, c.err)
		}
		if _, err := ParseSettings([]byte(c.file), ""); (c.err == "") != (err == nil) {
			t.Errorf("ParseSettings(%s) = %v", c.file, err)
		}
	}
}

// The spec's [instructions]: each section a file's name, "none", or its
// source and most; [connections]' tables name the connections.
func TestInstructionSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{
		"instructions": {"base": "instructions/base.md", "now": "none", "notes": {"max": 2048}, "repository": {"depth": 3, "max": 9000}},
		"connections": {"telegram": {"token_file": "t"}, "slack": {}, "activity": true}
	}`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := prompts.Settings{
		prompts.Base:       {File: "instructions/base.md"},
		prompts.Now:        {File: prompts.None},
		prompts.Notes:      {Max: 2048},
		prompts.Repository: {Depth: 3, Max: 9000},
	}
	if !reflect.DeepEqual(s.Instructions, want) {
		t.Errorf("instructions = %+v, want %+v", s.Instructions, want)
	}
	if got := strings.Join(s.Connections, ","); got != "slack,telegram" {
		t.Errorf("connections = %s, want slack,telegram", got)
	}
	for _, c := range []struct{ config, want string }{
		{`{"instructions":{"weather":"x.md"}}`, `no section "weather"`},
		{`{"instructions":{"persona":"../other/persona.md"}}`, "not a path inside"},
		{`{"instructions":{"notes":{"max":-1}}}`, "max -1"},
		{`{"instructions":{"notes":{"most":1}}}`, "instructions: notes"},
		{`{"instructions":{"notes":3}}`, "instructions: notes"},
		{`{"instructions":[1]}`, "config.json"},
	} {
		_, err := ParseSettings([]byte(c.config), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.config, err, c.want)
		}
	}
}

// The spec's [window]: what config.json leaves out is Link's, a max set is
// taken as set, and each rule broken is refused by its name.
func TestWindowSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{}`), "")
	if err != nil || s.Window != window.Defaults() {
		t.Fatalf("defaults: %+v, %v", s.Window, err)
	}
	s, err = ParseSettings([]byte(`{"window":{"max":8000,"compact_at":0.5,"save_notes":false,"answer":0.25,"margin":0,"unknown":4096}}`), "")
	want := window.Settings{Max: 8000, MaxSet: true, CompactAt: 0.5, Answer: 0.25, Margin: 0, Unknown: 4096}
	if err != nil || s.Window != want {
		t.Fatalf("got %+v, %v; want %+v", s.Window, err, want)
	}
	if s, _ := ParseSettings([]byte(`{"window":{"compact_at":"never"}}`), ""); !s.Window.Never {
		t.Error(`compact_at "never"`)
	}
	for bad, says := range map[string]string{
		`{"window":{"max":10}}`:             "window.max 10",
		`{"window":{"compact_at":"later"}}`: "window.compact_at",
		`{"window":{"compact_at":1.5}}`:     "window.compact_at",
		`{"window":{"answer":0.9}}`:         "window.answer",
		`{"window":{"margin":-1}}`:          "window.margin",
		`{"window":{"unknown":5}}`:          "window.unknown",
	} {
		if _, err := ParseSettings([]byte(bad), ""); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want a refusal naming %s", bad, err, says)
		}
	}
}

// config.json is read as every file of the agent's is, never through a
// link (spec: "Everything, a file of yours too, is read through the
// store, ... never through a link") and never past its bound: another
// agent's settings linked in are refused, naming the link, as is a file
// past 1 MiB; the agent ID is read the same way.
func TestReadSettingsNotThroughALink(t *testing.T) {
	ctx := t.Context()
	home := t.TempDir()
	a, err := store.For(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.For(home, "b")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []store.Paths{a, b} {
		if err := os.MkdirAll(p.Root, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(a.Config(), []byte(`{"id":"agent-a","model":{"name":"acme/a-secret-model"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSettings(ctx, a, ""); err != nil || s.Model != "acme/a-secret-model" {
		t.Fatalf("a's own settings: %+v, %v", s, err)
	}
	if err := os.Symlink(a.Config(), b.Config()); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	s, err := ReadSettings(ctx, b, "")
	if err == nil || !strings.Contains(err.Error(), "link") {
		t.Fatalf("b's config.json, a link to a's: %+v, %v; want a refusal naming the link", s, err)
	}
	if id, err := ReadAgentID(b); err == nil || id != "" {
		t.Fatalf("b's ID through a link to a's config.json: %q, %v; want a refusal", id, err)
	}
	if err := os.Remove(b.Config()); err != nil {
		t.Fatal(err)
	}
	big := `{"x":"` + strings.Repeat("x", maxConfig) + `"}`
	if err := os.WriteFile(b.Config(), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSettings(ctx, b, ""); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a config.json past its bound: %v", err)
	}
	if _, err := ReadAgentID(b); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a config.json past its bound, for the ID: %v", err)
	}
}

// FuzzReadAgentID proves config.json's bytes, as a person or a model
// wrote them in the agent's home, never panic ReadAgentID, that an id it
// reads is a good one, and that it reads the id of every file
// ParseSettings takes.
func FuzzReadAgentID(f *testing.F) {
	for _, s := range []string{`{"id":"3f1c9a2e-0b7d-4c1e-9a55-7e2f8d0c4b61"}`, `{"id":""}`, `{}`, `{"id":"../x"}`, `{"id":1}`, `[`, ``, `{"ID":"a","id":"b"}`} {
		f.Add([]byte(s))
	}
	p, err := store.For(f.TempDir(), "main")
	if err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p.Config(), b, 0o600); err != nil {
			t.Fatal(err)
		}
		id, err := ReadAgentID(p)
		if err == nil && id != "" && contract.CheckAgentID(id) != nil {
			t.Fatalf("read id %q from %q", id, b)
		}
		if _, serr := ParseSettings(b, ""); serr == nil && err != nil {
			t.Fatalf("%q: settings read, its id refused: %v", b, err)
		}
	})
}
