package fsx

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A File reads and writes at offsets as an *os.File does: short only at
// the end (io.EOF), its size where its end is, cut by Truncate, the same
// file as os.Stat says, and closed once; a name that is a link or isn't
// there is refused as Open refuses it.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "events.jsonl")
	if _, err := OpenFile(name, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing file: %v, want fs.ErrNotExist", err)
	}
	f, err := OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != name {
		t.Errorf("Name = %q, want %q", f.Name(), name)
	}
	if n, err := f.WriteAt([]byte("hello\nworld\n"), 0); n != 12 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if size, err := f.Size(); size != 12 || err != nil {
		t.Fatalf("Size = %d, %v; want 12", size, err)
	}
	b := make([]byte, 6)
	if n, err := f.ReadAt(b, 6); n != 6 || err != nil || string(b) != "world\n" {
		t.Fatalf("ReadAt 6 = %d %q, %v", n, b[:n], err)
	}
	if n, err := f.ReadAt(b, 9); n != 3 || err != io.EOF || string(b[:n]) != "ld\n" {
		t.Fatalf("ReadAt past the end = %d %q, %v; want 3 and io.EOF", n, b[:n], err)
	}
	if err := f.Truncate(6); err != nil {
		t.Fatal(err)
	}
	if size, err := f.Size(); size != 6 || err != nil {
		t.Fatalf("Size after Truncate = %d, %v; want 6", size, err)
	}
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	if same, err := f.SameFile(info); !same || err != nil {
		t.Errorf("SameFile of its own Stat = %v, %v", same, err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	oinfo, err := os.Stat(other)
	if err != nil {
		t.Fatal(err)
	}
	if same, err := f.SameFile(oinfo); same || err != nil {
		t.Errorf("SameFile of another file = %v, %v", same, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Close again: %v, want os.ErrClosed", err)
	}
	if _, err := f.ReadAt(b, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt once closed: %v, want os.ErrClosed", err)
	}
	if runtime.GOOS == "windows" {
		return // a link needs a privilege there
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(name, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(link, os.O_RDWR, 0); !errors.Is(err, ErrSymlink) {
		t.Errorf("open of a link: %v, want ErrSymlink", err)
	}
}

// Two Files of one file, in one process, exclude each other as two
// processes do: the lock is the open file's.
func TestFileLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "events.jsonl")
	a, err := OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := Lock(context.Background(), a, true); err != nil {
		t.Fatal(err)
	}
	if got, err := lock(b, false, false); got || err != nil {
		t.Fatalf("a shared lock had while another File holds the exclusive one: %v, %v", got, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := lock(b, false, false); !got || err != nil {
		t.Fatalf("the shared lock once the other File closed: %v, %v", got, err)
	}
}
