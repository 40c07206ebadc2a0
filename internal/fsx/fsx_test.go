package fsx

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.txt")
	if _, err := Open(name, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing file: %v, want fs.ErrNotExist", err)
	}
	f, err := Open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	if _, err := Open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("exclusive open of a file there: %v, want fs.ErrExist", err)
	}
	a, err := Open(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("again\n")
	a.Close()
	b, err := ReadFile(name)
	if err != nil || string(b) != "hello\nagain\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open a folder: %v", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil || len(names) != 1 || names[0] != "a.txt" {
		t.Errorf("folder lists %v, %v", names, err)
	}
}

func TestReadFileSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 70000} {
		want := bytes.Repeat([]byte("x"), n)
		name := filepath.Join(dir, strings.Repeat("f", 1+n%7))
		if err := os.WriteFile(name, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d, %v", n, len(got), err)
		}
	}
}

// BenchmarkOpen compares an open and close through Open with
// os.OpenFile's, of a file that is there.
func BenchmarkOpen(b *testing.B) {
	name := filepath.Join(b.TempDir(), "a")
	os.WriteFile(name, []byte("x"), 0o600)
	b.Run("fsx", func(b *testing.B) {
		for b.Loop() {
			f, err := Open(name, os.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("os", func(b *testing.B) {
		for b.Loop() {
			f, err := os.OpenFile(name, os.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}

// TestRename: a file renamed to a new name is there under it alone; a
// name that isn't there is fs.ErrNotExist.
func TestRename(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b); err != nil || string(got) != "x" {
		t.Errorf("b holds %q, %v", got, err)
	}
	if _, err := os.Lstat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a: %v, want it gone", err)
	}
	if err := Rename(a, b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("renamed a name that isn't there: %v", err)
	}
}

// Join is filepath.Join for a clean folder and a name of one element.
func TestJoin(t *testing.T) {
	sep := string(filepath.Separator)
	for _, c := range [][2]string{{sep + "a" + sep + "b", "c"}, {sep, "c"}, {"", "c"}, {".", "c"}, {"a", "events.jsonl"}} {
		if got, want := Join(c[0], c[1]), filepath.Join(c[0], c[1]); got != want && !(c[0] == "." && got == "."+sep+"c") {
			t.Errorf("Join(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
}

// TestSetAside: a file set aside is renamed beside itself, named by the
// time, its bytes whole, its place free.
func TestSetAside(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sessions.json")
	os.WriteFile(name, []byte(`{"threads":`), 0o600)
	at := time.Date(2026, 12, 7, 18, 40, 1, 5, time.FixedZone("x", 3600))
	aside, err := SetAside(name, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := name + ".corrupt-20261207T174001.000000005Z"; aside != want {
		t.Errorf("set aside as %s, want %s", aside, want)
	}
	if b, _ := os.ReadFile(aside); string(b) != `{"threads":` {
		t.Errorf("the file set aside holds %q", b)
	}
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("its place: %v, want free", err)
	}
	if _, err := SetAside(name, at); err == nil {
		t.Error("a file not there was set aside")
	}
}
