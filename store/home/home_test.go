package home

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

// agentHome makes the home of agent main under a fresh Link home, with
// files, each name (slash-separated) to its text.
func agentHome(t *testing.T, files map[string]string) (Files, string) {
	t.Helper()
	linkHome := t.TempDir()
	p, err := store.For(linkHome, "main")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		path := filepath.Join(p.Root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Files{Home: linkHome}, p.Root
}

func TestReadFile(t *testing.T) {
	ctx := context.Background()
	f, _ := agentHome(t, map[string]string{"instructions/persona.md": "I am Ada.\n", "empty.md": ""})
	got, err := f.ReadFile(ctx, "main", "instructions/persona.md", 1024)
	if err != nil || string(got) != "I am Ada.\n" {
		t.Fatalf("ReadFile = %q, %v; want %q", got, err, "I am Ada.\n")
	}
	got, err = f.ReadFile(ctx, "main", "empty.md", 1024)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadFile(empty) = %q, %v", got, err)
	}
	if _, err := f.ReadFile(ctx, "main", "instructions/owner.md", 1024); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := f.ReadFile(ctx, "main", "instructions", 1024); err == nil {
		t.Fatal("ReadFile of a folder: no error")
	}
}

func TestReadFileBounded(t *testing.T) {
	ctx := context.Background()
	text := strings.Repeat("abcdefghij", 1000)
	f, _ := agentHome(t, map[string]string{"big.md": text})
	for _, max := range []int{0, 1, 511, 512, 513, 9999, 10000, 10001} {
		got, err := f.ReadFile(ctx, "main", "big.md", max)
		want := text
		if max < len(text) {
			want = text[:max]
			if !errors.Is(err, store.ErrTooLarge) {
				t.Errorf("max %d: err %v, want ErrTooLarge", max, err)
			}
		} else if err != nil {
			t.Errorf("max %d: %v", max, err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("max %d: got %d bytes, want %d", max, len(got), len(want))
		}
	}
}

func TestLinksRefused(t *testing.T) { linksRefused(t) }

// linksRefused: a link anywhere on the way to a file is refused, one
// leading out of the home or into it alike; Stat and ReadDir say what a
// link is without following it.
func linksRefused(t *testing.T) {
	ctx := context.Background()
	f, root := agentHome(t, map[string]string{"instructions/owner.md": "mine", "files/a.md": "a"})
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("secret"), 0o644)
	other, _ := store.For(f.Home, "other")
	os.MkdirAll(other.Root, 0o755)
	os.WriteFile(filepath.Join(other.Root, "notes.md"), []byte("another agent's"), 0o644)

	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(root, "instructions", "persona.md")))        // out of the home
	must(os.Symlink("owner.md", filepath.Join(root, "instructions", "instruction.md"))) // inside it
	must(os.Symlink(filepath.Join(other.Root), filepath.Join(root, "other")))           // another agent's
	must(os.Symlink(filepath.Join(root, "files"), filepath.Join(root, "workspace")))    // a folder inside
	for _, name := range []string{"instructions/persona.md", "instructions/instruction.md", "other/notes.md", "workspace/a.md"} {
		if _, err := f.ReadFile(ctx, "main", name, 1024); !errors.Is(err, store.ErrSymlink) {
			t.Errorf("ReadFile(%s) = %v, want ErrSymlink", name, err)
		}
	}
	if _, err := f.ReadDir(ctx, "main", "workspace", 10); !errors.Is(err, store.ErrSymlink) {
		t.Errorf("ReadDir(workspace) = %v, want ErrSymlink", err)
	}
	fi, err := f.Stat(ctx, "main", "instructions/persona.md")
	if err != nil || !fi.Symlink {
		t.Errorf("Stat(a link) = %+v, %v; want a link", fi, err)
	}
	if _, err := f.Stat(ctx, "main", "workspace/a.md"); !errors.Is(err, store.ErrSymlink) {
		t.Errorf("Stat through a link = %v, want ErrSymlink", err)
	}
	list, err := f.ReadDir(ctx, "main", "instructions", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		s := e.Name
		if e.Symlink {
			s += "@"
		}
		got = append(got, s)
	}
	if want := "instruction.md@ owner.md persona.md@"; strings.Join(got, " ") != want {
		t.Errorf("ReadDir = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestBadNames(t *testing.T) {
	ctx := context.Background()
	f, _ := agentHome(t, map[string]string{"a.md": "a"})
	for _, name := range []string{"", ".", "..", "../main/a.md", "/etc/passwd", "a/../a.md", "./a.md", "a//b", "a\\b", "x/", "a\x00"} {
		if _, err := f.ReadFile(ctx, "main", name, 10); !errors.Is(err, store.ErrBadName) {
			t.Errorf("ReadFile(%q) = %v, want ErrBadName", name, err)
		}
	}
	if _, err := f.ReadFile(ctx, "../x", "a.md", 10); err == nil {
		t.Error("an agent named ../x: no error")
	}
}

func TestReadDirBounded(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	for _, n := range []string{"d", "b", "a", "e", "c"} {
		files["skills/"+n+"/SKILL.md"] = n
	}
	f, _ := agentHome(t, files)
	list, err := f.ReadDir(ctx, "main", "skills", 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		if !e.Dir {
			t.Errorf("%s: not a folder", e.Name)
		}
		got = append(got, e.Name)
	}
	if strings.Join(got, "") != "abc" {
		t.Errorf("ReadDir(3) = %v, want a b c", got)
	}
}

// TestRooted runs the portable way (os.Root) through the same checks.
func TestRooted(t *testing.T) {
	_, root := agentHome(t, map[string]string{"instructions/owner.md": "mine"})
	os.Symlink("owner.md", filepath.Join(root, "instructions", "persona.md"))
	os.Symlink("instructions", filepath.Join(root, "inst"))
	f, err := openRooted(root, "instructions/owner.md")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, name := range []string{"instructions/persona.md", "inst/owner.md"} {
		if _, err := openRooted(root, name); !errors.Is(err, store.ErrSymlink) {
			t.Errorf("openRooted(%s) = %v, want ErrSymlink", name, err)
		}
	}
	if _, err := lstatRooted(root, "inst/owner.md"); !errors.Is(err, store.ErrSymlink) {
		t.Errorf("lstatRooted through a link = %v, want ErrSymlink", err)
	}
	if fi, err := lstatRooted(root, "inst"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstatRooted(a link) = %v, %v", fi, err)
	}
}

func FuzzCheckFileName(f *testing.F) {
	for _, s := range []string{"a.md", "../a", "a/./b", "skills/x/SKILL.md", "/a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if store.CheckFileName(name) != nil {
			return
		}
		// An accepted name never leaves the folder it is joined to.
		j := filepath.ToSlash(filepath.Join("/home/main", name))
		if !strings.HasPrefix(j, "/home/main/") {
			t.Fatalf("%q accepted, joins to %q", name, j)
		}
	})
}
