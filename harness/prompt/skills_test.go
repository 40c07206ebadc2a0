package prompt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

func TestSkillDescription(t *testing.T) {
	long := strings.Repeat("x", maxSkillDescription+1)
	for _, c := range []struct {
		folder, text, want, err string
	}{
		{"pdf", "---\nname: pdf\ndescription: Reads PDFs.\n---", "Reads PDFs.", ""},
		{"pdf", "---\nname: pdf\n---", "", "no description"},
		{"pdf", "---\ndescription: x\n---", "", "no name"},
		{"pdf", "---\nname: word\ndescription: x\n---", "", `names "word"`},
		{"Pdf", "---\nname: Pdf\ndescription: x\n---", "", "not a skill's name"},
		{"a--b", "---\nname: a--b\ndescription: x\n---", "", "not a skill's name"},
		{"pdf", "---\nname: pdf\ndescription: " + long + "\n---", "", "over 1024"},
	} {
		got, err := skillDescription(c.folder, []byte(c.text))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want one saying %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.text, got, err, c.want)
		}
	}
}

// A description taken is one line, of at most its most.
func FuzzSkillDescription(f *testing.F) {
	f.Add("---\nname: pdf\ndescription: >\n  a\n  b\n---\n")
	f.Add("---\ndescription: \"x\\\"\"\n---")
	f.Add("---\ndescription: 'it''s'\n---")
	f.Fuzz(func(t *testing.T, text string) {
		desc, err := skillDescription("pdf", []byte(text))
		if err == nil && (desc == "" || strings.Contains(desc, "\n") || len([]rune(desc)) > maxSkillDescription) {
			t.Fatalf("description %q taken", desc)
		}
	})
}

// countingFiles counts the files read through it.
type countingFiles struct {
	store.Files
	reads atomic.Int64
}

func (c *countingFiles) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	c.reads.Add(1)
	return c.Files.ReadFile(ctx, agent, name, max)
}

// TestSkillsKept: a SKILL.md is read once while it is unchanged, and
// again once it changes; a skill gone is gone from the prompt.
func TestSkillsKept(t *testing.T) {
	f, root := sampleHome(t)
	cf := &countingFiles{Files: f}
	c := &Composer{Files: cf}
	turn := Turn{Agent: "main", Settings: Settings{Base: {File: None}, Now: {File: None}, Repository: {File: None}, Persona: {File: None}, Owner: {File: None}, Instruction: {File: None}, Notes: {File: None}}}
	skills := func() string {
		t.Helper()
		p, err := c.Compose(context.Background(), turn)
		if err != nil {
			t.Fatal(err)
		}
		return p.Text()
	}
	first := skills()
	if n := cf.reads.Load(); n != 4 {
		t.Fatalf("first compose read %d files, want the 4 SKILL.md", n)
	}
	if again := skills(); again != first || cf.reads.Load() != 4 {
		t.Fatalf("second compose read %d files in all (want 4), or differs", cf.reads.Load())
	}
	pdf := filepath.Join(root, "skills", "pdf", "SKILL.md")
	os.WriteFile(pdf, []byte("---\nname: pdf\ndescription: Reads PDFs, now faster.\n---\n"), 0o644)
	later := time.Now().Add(time.Second)
	os.Chtimes(pdf, later, later)
	if got := skills(); !strings.Contains(got, "- pdf: Reads PDFs, now faster.") || cf.reads.Load() != 5 {
		t.Errorf("after a change (reads %d, want 5):\n%s", cf.reads.Load(), got)
	}
	os.RemoveAll(filepath.Join(root, "skills", "pdf"))
	if got := skills(); strings.Contains(got, "pdf") {
		t.Errorf("a skill removed is still listed:\n%s", got)
	}
	if _, kept := c.skills["main"]["pdf"]; kept {
		t.Error("a skill removed is still kept")
	}
}

// TestComposeConcurrent: turns of one agent compose at once through one
// Composer, each the same prompt (what was left out is told once).
func TestComposeConcurrent(t *testing.T) {
	f, _ := sampleHome(t)
	c := &Composer{Files: f}
	want, err := c.Compose(context.Background(), sampleTurn())
	if err != nil {
		t.Fatal(err)
	}
	c = &Composer{Files: f} // nothing kept: each goroutine reads and keeps
	got := make(chan string, 8)
	for range 8 {
		go func() {
			p, err := c.Compose(context.Background(), sampleTurn())
			if err != nil {
				got <- err.Error()
				return
			}
			got <- render(Prompt{Sections: p.Sections})
		}()
	}
	for range 8 {
		if g, w := <-got, render(Prompt{Sections: want.Sections}); g != w {
			t.Fatalf("a concurrent compose differs:\n%s", diff(w, g))
		}
	}
}
