package fts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/internal/sqlitefile"
	"github.com/lnk-dev/link/memory"
)

// A symbolic link to another agent's index put in the index's place
// after Open, or a hard link to it, is refused at the next search and
// the next write, with the pool's connections let go (as a pool does
// with a bad one), and the other agent's index is neither read nor
// written; removed, the index is made again.
func TestPutInPlaceRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, other, path string)
		want error
	}{
		{"link", func(t *testing.T, other, path string) {
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, fsx.ErrSymlink},
		{"hard link", func(t *testing.T, other, path string) {
			if err := os.Link(other, path); err != nil {
				t.Fatal(err)
			}
		}, sqlitefile.ErrHardLink},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otherDir := t.TempDir()
			other := filepath.Join(otherDir, "index.sqlite")
			ox, err := Open(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			if err := ox.Put(ctx, []memory.Doc{doc("files/theirs.md", "wombat burrows")}); err != nil {
				t.Fatal(err)
			}
			if err := ox.Close(); err != nil {
				t.Fatal(err)
			}
			before := listing(t, otherDir)

			path := filepath.Join(t.TempDir(), "index.sqlite")
			x, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if err := x.Put(ctx, []memory.Doc{doc("files/mine.md", "quokka sightings")}); err != nil {
				t.Fatal(err)
			}
			if hits, err := x.Search(ctx, "quokka", 10); err != nil || len(hits) != 1 {
				t.Fatalf("search: %v, %v", hits, err)
			}
			// The pool lets its connections go, as it does a bad one.
			x.db.SetMaxIdleConns(0)
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(path + s)
			}
			tc.put(t, other, path)

			hits, err := x.Search(ctx, "wombat", 10)
			if !errors.Is(err, tc.want) {
				t.Errorf("search: %v, %v, want %v", hits, err, tc.want)
			}
			err = x.Put(ctx, []memory.Doc{doc("files/into.md", "into the other's?")})
			if !errors.Is(err, tc.want) {
				t.Errorf("put: %v, want %v", err, tc.want)
			}
			if _, _, err := x.Stamps(ctx); !errors.Is(err, tc.want) {
				t.Errorf("stamps: %v, want %v", err, tc.want)
			}
			if after := listing(t, otherDir); !slices.Equal(after, before) {
				t.Errorf("the other agent's folder was\n%v\nis\n%v", before, after)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().IsRegular() == (tc.name == "link") {
				t.Errorf("what was put in the index's place was removed or changed: %v, %v", fi, err)
			}

			// Removed, the index is made again, empty.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if hits, err := x.Search(ctx, "wombat", 10); err != nil || len(hits) != 0 {
				t.Errorf("the index made again: %v, %v", hits, err)
			}

			ox, err = Open(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			defer ox.Close()
			if hits, err := ox.Search(ctx, "wombat quokka into", 10); err != nil || len(hits) != 1 || hits[0].Source != "files/theirs.md" {
				t.Errorf("the other agent's index: %+v, %v, want its one file", hits, err)
			}
		})
	}
}

// A symbolic link, or a hard link, in the index's place at Open is
// refused, not removed and made again as a file that isn't an index is.
func TestOpenLinkRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	other := filepath.Join(dir, "other.sqlite")
	if err := os.WriteFile(other, []byte("another agent's"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, put := range map[string]func(string, string) error{"link": os.Symlink, "hard link": os.Link} {
		path := filepath.Join(dir, name+".sqlite")
		if err := put(other, path); err != nil {
			t.Fatal(err)
		}
		x, err := Open(ctx, path)
		if err == nil {
			x.Close()
		}
		if !refused(err) {
			t.Errorf("%s: %v, want refused", name, err)
		}
		if b, _ := os.ReadFile(other); string(b) != "another agent's" {
			t.Errorf("%s: the other file is %q", name, b)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("%s: removed: %v", name, err)
		}
	}
}

// doc is a source of one chunk, text.
func doc(name, text string) memory.Doc {
	return memory.Doc{
		Source: memory.Source{Name: name, Kind: memory.KindFile, File: name, Stamp: "1"},
		Chunks: []memory.Chunk{{Line: 1, Lines: 1, Len: len(text), Text: text}},
	}
}

// listing is each file of dir with its size and time.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		l = append(l, fmt.Sprintf("%s %d %v", e.Name(), fi.Size(), fi.ModTime()))
	}
	return l
}
