package prompt

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/home"
)

var update = flag.Bool("update", false, "write the golden files anew")

// sampleHome copies testdata/home, a Link home with agent main's files,
// to a folder of the test's, and gives its Files and main's home.
func sampleHome(t testing.TB) (home.Files, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/home")); err != nil {
		t.Fatal(err)
	}
	p, err := store.For(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	return home.Files{Home: dir}, p.Root
}

// sampleTurn is a turn of main's with every section's facts.
func sampleTurn() Turn {
	return Turn{
		Agent: "main",
		Model: "anthropic/claude-opus-5-5",
		Tools: []model.ToolText{
			{Tool: "web", Text: "Fetch a page before you quote it."},
			{Tool: "memory", Text: "Search before you say you don't know.\nRemember what Grace asks you to."},
			{Tool: "run", Text: "  "}, // says nothing
		},
		Environment: Env{FilesFolder: "/home/grace/.lnk/agents/main/files", Connections: []string{"telegram", "slack"}},
		Zone:        "Europe/Paris",
	}
}

// render is a prompt as its golden file keeps it: each section under
// its name, then what was left out.
func render(p Prompt) string {
	var b strings.Builder
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "<<< %s >>>\n%s\n", s.Name, s.Text)
	}
	for _, e := range p.Problems {
		fmt.Fprintf(&b, "<<< left out >>>\n%s\n", e)
	}
	return b.String()
}

// golden compares got with testdata/golden/name.txt (written anew with
// -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from its golden file:\n%s", name, diff(string(want), got))
	}
}

// diff is the lines of want and got from the first that differs.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n- want: %q\n+ got:  %q", i+1, wl, gl)
		}
	}
	return "(same lines)"
}

func compose(t *testing.T, f store.Files, turn Turn) Prompt {
	t.Helper()
	c := &Composer{Files: f}
	p, err := c.Compose(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// names is the names of p's sections, in order.
func names(p Prompt) []string {
	var out []string
	for _, s := range p.Sections {
		out = append(out, s.Name)
	}
	return out
}

// TestEverySection: the sample home's prompt has every section, in
// order, as its golden file.
func TestEverySection(t *testing.T) {
	f, _ := sampleHome(t)
	p := compose(t, f, sampleTurn())
	if got, want := strings.Join(names(p), " "), strings.Join(Order, " "); got != want {
		t.Errorf("sections:\n got %s\nwant %s", got, want)
	}
	golden(t, "all", render(p))
}

// TestEachMissing: with each section's source gone, the prompt is the
// whole one without that section, the rest byte for byte the same.
func TestEachMissing(t *testing.T) {
	f, _ := sampleHome(t)
	all := compose(t, f, sampleTurn())
	cases := []struct {
		section string
		remove  string // a file or folder of main's home taken away
		change  func(*Turn)
	}{
		{section: Base, change: func(t *Turn) { t.Settings = Settings{Base: {File: None}} }},
		{section: Model, change: func(t *Turn) { t.Model = "ollama/qwen3:8b" }},
		{section: Tools, change: func(t *Turn) { t.Tools = nil }},
		{section: Environment, change: func(t *Turn) { t.Environment = Env{} }},
		{section: Repository, remove: "files"},
		{section: Skills, remove: "skills"},
		{section: Persona, remove: "instructions/persona.md"},
		{section: Owner, remove: "instructions/owner.md"},
		{section: Instruction, remove: "instructions/instruction.md"},
		{section: Notes, remove: "memory/notes.md"},
		{section: Now, change: func(t *Turn) { t.Settings = Settings{Now: {File: None}} }},
	}
	for _, c := range cases {
		t.Run(c.section, func(t *testing.T) {
			f, root := sampleHome(t)
			turn := sampleTurn()
			if c.remove != "" {
				if err := os.RemoveAll(filepath.Join(root, c.remove)); err != nil {
					t.Fatal(err)
				}
			}
			if c.change != nil {
				c.change(&turn)
			}
			got := compose(t, f, turn)
			var want Prompt
			for _, s := range all.Sections {
				if s.Name != c.section {
					want.Sections = append(want.Sections, s)
				}
			}
			if c.section != Skills {
				want.Problems = all.Problems
			}
			if g, w := render(got), render(want); g != w {
				t.Errorf("without %s:\n%s", c.section, diff(w, g))
			}
		})
	}
}

// TestEachOverItsMost: each section held to a small most is cut as its
// golden file shows: a file's at a line break and said so, a list's
// (tools, repository, skills) by whole entries.
func TestEachOverItsMost(t *testing.T) {
	most := map[string]int{
		Base: 120, Model: 40, Tools: 100, Environment: 60, Repository: 120, Skills: 260,
		Persona: 30, Owner: 40, Instruction: 40, Notes: 45, Now: 50,
	}
	for _, name := range Order {
		t.Run(name, func(t *testing.T) {
			f, _ := sampleHome(t)
			turn := sampleTurn()
			turn.Settings = Settings{name: {Max: most[name]}}
			p := compose(t, f, turn)
			var got *Section
			for i := range p.Sections {
				if p.Sections[i].Name == name {
					got = &p.Sections[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s section", name)
			}
			body := strings.TrimPrefix(got.Text, headings[name]+"\n\n")
			note := fmt.Sprintf(CutNote, most[name])
			if n := len(strings.TrimSuffix(body, note)); n > most[name]+len("\n\n[9 more left out: past this section's most of 999 bytes.]") {
				t.Errorf("%s: %d bytes over a most of %d", name, n, most[name])
			}
			golden(t, "over-"+name, render(Prompt{Sections: []Section{*got}}))
		})
	}
}

// TestFallbackModel: a fallback model is sent its own file in the
// first's place, the rest of the prompt the same.
func TestFallbackModel(t *testing.T) {
	f, _ := sampleHome(t)
	first := compose(t, f, sampleTurn())
	turn := sampleTurn()
	turn.Model = "openai/gpt-6-luna"
	fallback := compose(t, f, turn)
	for i := range first.Sections {
		a, b := first.Sections[i], fallback.Sections[i]
		if a.Name == Model {
			if want := "When a tool fails, say so plainly before trying another."; b.Text != want {
				t.Errorf("fallback's model section = %q, want %q", b.Text, want)
			}
			continue
		}
		if a != b {
			t.Errorf("section %s differs:\n%s", a.Name, diff(a.Text, b.Text))
		}
	}
}

// TestReplaced: a file replaces any section's words, the base's and a
// section made of lists too; {model} names the model.
func TestReplaced(t *testing.T) {
	f, root := sampleHome(t)
	os.WriteFile(filepath.Join(root, "instructions", "tools.md"), []byte("Use the web tool sparingly.\n"), 0o644)
	turn := sampleTurn()
	turn.Settings = Settings{
		Base:  {File: "instructions/base.md"},
		Tools: {File: "instructions/tools.md"},
		Model: {File: "instructions/models/{model}/instruction.md"},
	}
	p := compose(t, f, turn)
	if got, want := p.Sections[0].Text, "You are Grace's own agent. Answer as briefly as you can."; got != want {
		t.Errorf("base = %q, want %q", got, want)
	}
	if got, want := p.Sections[2].Text, "# Your tools\n\nUse the web tool sparingly."; got != want {
		t.Errorf("tools = %q, want %q", got, want)
	}
	if !strings.HasPrefix(p.Sections[1].Text, "Keep answers short") {
		t.Errorf("model = %q", p.Sections[1].Text)
	}
}

// TestLinkLeftOut: a file of the agent's that is a link is left out and
// said so, and the rest of the prompt stands.
func TestLinkLeftOut(t *testing.T) {
	f, root := sampleHome(t)
	persona := filepath.Join(root, "instructions", "persona.md")
	os.Remove(persona)
	secret := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(secret, []byte("another's secret"), 0o644)
	if err := os.Symlink(secret, persona); err != nil {
		t.Fatal(err)
	}
	os.Symlink(secret, filepath.Join(root, "files", "docs", "AGENTS.md"))
	p := compose(t, f, sampleTurn())
	if strings.Contains(p.Text(), "secret") {
		t.Fatal("a link was read")
	}
	if got := strings.Join(names(p), " "); strings.Contains(got, Persona) {
		t.Errorf("sections %s: persona read through a link", got)
	}
	var links int
	for _, e := range p.Problems {
		if errors.Is(e, store.ErrSymlink) {
			links++
		}
	}
	if links != 2 {
		t.Errorf("problems %v: want 2 links", p.Problems)
	}
	if !strings.Contains(p.Text(), "Docs are Markdown") {
		t.Error("docs/CLAUDE.md not read beside its AGENTS.md that is a link")
	}
}

func TestEmptyNotesNoSection(t *testing.T) {
	f, root := sampleHome(t)
	os.WriteFile(filepath.Join(root, "memory", "notes.md"), []byte(" \n\n"), 0o644)
	p := compose(t, f, sampleTurn())
	for _, s := range p.Sections {
		if s.Name == Notes {
			t.Fatalf("a notes section of an empty file: %q", s.Text)
		}
	}
}

func TestRepositoryDepth(t *testing.T) {
	f, _ := sampleHome(t)
	turn := sampleTurn()
	for _, c := range []struct {
		depth int
		want  []string
	}{
		{1, []string{"## AGENTS.md"}},
		{2, []string{"## AGENTS.md", "## app/AGENTS.md", "## docs/CLAUDE.md"}},
		{3, []string{"## AGENTS.md", "## app/AGENTS.md", "## docs/CLAUDE.md", "## deep/inner/AGENTS.md"}},
	} {
		turn.Settings = Settings{Repository: {Depth: c.depth}}
		p := compose(t, f, turn)
		var got []string
		for _, s := range p.Sections {
			if s.Name != Repository {
				continue
			}
			for _, l := range strings.Split(s.Text, "\n") {
				if strings.HasPrefix(l, "## ") {
					got = append(got, l)
				}
			}
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("depth %d: %q, want %q", c.depth, got, c.want)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	good := Settings{Base: {File: "instructions/base.md", Max: 100}, Repository: {Depth: 3}, Notes: {File: None}, Model: {File: "m/{model}.md"}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{"weather": {}}, `no section "weather"`},
		{Settings{Notes: {Max: -1}}, "max -1"},
		{Settings{Notes: {Max: MaxMost + 1}}, "max"},
		{Settings{Persona: {File: "../other/persona.md"}}, "not a path inside"},
		{Settings{Persona: {File: "/etc/passwd"}}, "not a path inside"},
		{Settings{Notes: {Depth: 2}}, "repository's alone"},
		{Settings{Repository: {Depth: MaxDepth + 1}}, "depth"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want one saying %q", c.s, err, c.want)
		}
	}
}

// looking is Files that counts its Looks and the reads made through
// them and around them.
type looking struct {
	store.Files
	looks, around, through int
}

func (l *looking) Look() store.Files { l.looks++; return &lookedThrough{l} }

func (l *looking) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	l.around++
	return l.Files.ReadFile(ctx, agent, name, max)
}

func (l *looking) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	l.around++
	return l.Files.ReadDir(ctx, agent, name, max)
}

func (l *looking) Stat(ctx context.Context, agent, name string) (store.FileInfo, error) {
	l.around++
	return l.Files.Stat(ctx, agent, name)
}

// lookedThrough is a looking's Look.
type lookedThrough struct{ l *looking }

func (t *lookedThrough) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	t.l.through++
	return t.l.Files.ReadFile(ctx, agent, name, max)
}

func (t *lookedThrough) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	t.l.through++
	return t.l.Files.ReadDir(ctx, agent, name, max)
}

func (t *lookedThrough) Stat(ctx context.Context, agent, name string) (store.FileInfo, error) {
	t.l.through++
	return t.l.Files.Stat(ctx, agent, name)
}

// TestComposeReadsThroughOneLook: Files that is a Looker (home.Misses)
// is read through one Look a Compose, every read of it, so the folders
// on the way to its names are looked at once a Compose, not once a name;
// and the prompt is the same.
func TestComposeReadsThroughOneLook(t *testing.T) {
	f, _ := sampleHome(t)
	l := &looking{Files: f}
	c, plain := &Composer{Files: l}, &Composer{Files: f}
	for i := range 2 {
		p, err := c.Compose(context.Background(), sampleTurn())
		if err != nil {
			t.Fatal(err)
		}
		if l.looks != i+1 || l.around != 0 || l.through == 0 {
			t.Fatalf("compose %d: %d looks, %d reads around them, %d through; want %d, 0, some", i+1, l.looks, l.around, l.through, i+1)
		}
		want, err := plain.Compose(context.Background(), sampleTurn())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := render(p), render(want); got != want {
			t.Errorf("compose %d through a Look:\n%s", i+1, diff(want, got))
		}
	}
	var _ Looker = (*home.Misses)(nil)
}
