package home

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"context"
	"errors"
	"io/fs"
	"testing"
)

// TestMissesRemember: on Linux a miss in a trusted folder is remembered
// and answered from memory; one in a folder changed within
// foldertime.Wait is not remembered.
func TestMissesRemember(t *testing.T) {
	ctx := context.Background()
	f, root := agentHome(t, map[string]string{"memory/other.md": "x"})
	m := &Misses{Files: f, Now: later}
	if _, err := m.ReadFile(ctx, "main", "memory/notes.md", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if !m.look().stillMissing(ctx, "main", "memory/notes.md") {
		t.Fatal("a miss in a trusted folder is not remembered")
	}

	// A clock at the folder's last change: changed within foldertime.WaitFine.
	fi, err := os.Stat(filepath.Join(root, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := &Misses{Files: f, Now: fi.ModTime}
	if _, err := fresh.ReadFile(ctx, "main", "memory/notes.md", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if fresh.look().stillMissing(ctx, "main", "memory/notes.md") {
		t.Fatal("a miss in a folder changed within foldertime.Wait is remembered")
	}
}

// TestLookOneLstatPerFolder: a pass of reads (Look) of names remembered
// missing, as a turn's prompt reads them, looks once at the one folder
// they are missing from and opens nothing; a file made since is read by
// the next pass. The probes the prompt made each turn (an open of the
// home, an openat2 and a close, then an lstat of each folder of the
// name's path, for each name) fail it if they come back.
func TestLookOneLstatPerFolder(t *testing.T) {
	ctx := context.Background()
	f, root := agentHome(t, nil)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	m := &Misses{Files: f, Now: later}
	files := []string{"instructions/models/offline/instruction.md", "instructions/persona.md",
		"instructions/owner.md", "instructions/instruction.md", "memory/notes.md"}
	dirs := []string{"files", "skills"}
	var lstats, opens int
	sysLstat = func(p string, st *unix.Stat_t) error { lstats++; return unix.Lstat(p, st) }
	sysOpenat2 = func(fd int, p string, how *unix.OpenHow) (int, error) { opens++; return unix.Openat2(fd, p, how) }
	t.Cleanup(func() { sysLstat, sysOpenat2 = unix.Lstat, unix.Openat2 })
	pass := func() (found []string) {
		lstats, opens = 0, 0
		l := m.Look()
		for _, name := range files {
			b, err := l.ReadFile(ctx, "main", name, 100)
			if err == nil {
				found = append(found, name+"="+string(b))
			} else if !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
		for _, name := range dirs {
			if _, err := l.ReadDir(ctx, "main", name, 10); err == nil {
				found = append(found, name)
			} else if !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
		return found
	}
	if found := pass(); len(found) != 0 {
		t.Fatalf("found %v in an empty home", found)
	}
	// The first pass reads each name and looks at the folders of its
	// path once between them all (the home, instructions, models,
	// offline, memory); a miss whose folders were all looked at before
	// its read is proved by those looks, without a Stat after it (all
	// but the first name's and memory/notes.md's).
	if opens != len(files)+len(dirs)+2 || lstats != 5 {
		t.Errorf("first pass: %d openat2, %d lstat; want %d and 5", opens, lstats, len(files)+len(dirs)+2)
	}
	for i := range 3 {
		if found := pass(); len(found) != 0 {
			t.Fatalf("pass %d found %v", i, found)
		}
		if opens != 0 || lstats != 1 {
			t.Fatalf("pass %d of names remembered missing: %d openat2, %d lstat; want 0 and 1 (the home)", i, opens, lstats)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "instructions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "instructions", "owner.md"), []byte("Ada"), 0o644); err != nil {
		t.Fatal(err)
	}
	if found := pass(); len(found) != 1 || found[0] != "instructions/owner.md=Ada" {
		t.Fatalf("after owner.md was made: found %v", found)
	}
}
