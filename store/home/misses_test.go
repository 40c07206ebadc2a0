package home

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// later is a clock past foldertime.Wait of every folder just made, so
// Misses trusts their times at once.
func later() time.Time { return time.Now().Add(time.Hour) }

// TestMissesSeeFileMadeLater: a file found missing, remembered, is read
// by the next read after it is made, wherever on its path the making
// begins: in a folder that was there, in folders made for it, by a
// folder renamed into place, and a folder listed after it is made.
func TestMissesSeeFileMadeLater(t *testing.T) {
	ctx := context.Background()
	f, root := agentHome(t, map[string]string{"memory/other.md": "x"})
	m := &Misses{Files: f, Now: later}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := func(name string) {
		t.Helper()
		for range 2 { // the second read is answered from memory, where it can be
			if b, err := m.ReadFile(ctx, "main", name, 100); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s: %q, %v; want missing", name, b, err)
			}
		}
	}
	read := func(name, want string) {
		t.Helper()
		if b, err := m.ReadFile(ctx, "main", name, 100); err != nil || string(b) != want {
			t.Fatalf("%s: %q, %v; want %q", name, b, err, want)
		}
	}

	missing("memory/notes.md") // its folder there
	write("memory/notes.md", "notes")
	read("memory/notes.md", "notes")

	missing("instructions/persona.md") // no folder yet
	missing("instructions/models/m/instruction.md")
	write("instructions/persona.md", "persona")
	read("instructions/persona.md", "persona")
	missing("instructions/models/m/instruction.md")
	write("instructions/models/m/instruction.md", "model")
	read("instructions/models/m/instruction.md", "model")

	missing("notes/a.md") // a folder made aside, renamed into place
	aside := filepath.Join(root, "aside")
	if err := os.MkdirAll(aside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aside, "a.md"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, filepath.Join(root, "notes")); err != nil {
		t.Fatal(err)
	}
	read("notes/a.md", "a")

	for range 2 {
		if _, err := m.ReadDir(ctx, "main", "skills", 10); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("skills: %v; want missing", err)
		}
	}
	write("skills/s/SKILL.md", "---\n")
	if es, err := m.ReadDir(ctx, "main", "skills", 10); err != nil || len(es) != 1 || es[0].Name != "s" {
		t.Fatalf("skills made: %+v, %v", es, err)
	}
}

// TestMissesRefuseBadNames: a name that leaves the home is refused as
// Files refuses it, and nothing is remembered of it.
func TestMissesRefuseBadNames(t *testing.T) {
	f, _ := agentHome(t, nil)
	m := &Misses{Files: f, Now: later}
	for _, name := range []string{"../x", "/etc/passwd", "a/../../b"} {
		if _, err := m.ReadFile(context.Background(), "main", name, 10); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want refused", name, err)
		}
	}
	if len(m.missing) != 0 {
		t.Errorf("remembered %v", m.missing)
	}
}
