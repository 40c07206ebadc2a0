package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// A database, or its WAL, that is a symbolic link is refused, and
// nothing is written where it points.
func TestLinkRefused(t *testing.T) {
	for _, name := range []string{File, File + "-wal"} {
		chats := t.TempDir()
		elsewhere := filepath.Join(t.TempDir(), "target")
		if err := os.Symlink(elsewhere, filepath.Join(chats, name)); err != nil {
			t.Fatal(err)
		}
		d, err := Open(chats)
		if !errors.Is(err, fsx.ErrSymlink) {
			if d != nil {
				d.Close()
			}
			t.Fatalf("%s a link: opened, %v", name, err)
		}
		if _, err := os.Lstat(elsewhere); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s a link: written where it points (%v)", name, err)
		}
	}
}

// A symbolic link to another agent's events.sqlite put in the database's
// place after Open, or a hard link to it, is refused when the
// pool next opens a connection (as it does once one has been idle a
// minute), for a write and for a read, and the other agent's file is
// neither written nor read: no row added, no WAL made beside it.
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
		}, ErrReplaced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otherChats := t.TempDir()
			od, err := Open(otherChats)
			if err != nil {
				t.Fatal(err)
			}
			if err := od.Append(ctx, "default", store.Event{Seq: 1, Kind: store.KindMessage, Text: "the other agent's"}); err != nil {
				t.Fatal(err)
			}
			if err := od.Close(); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(otherChats, File)
			before := listing(t, otherChats)

			chats := t.TempDir()
			d, err := Open(chats)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if err := d.Append(ctx, "default", store.Event{Seq: 1, Kind: store.KindMessage, Text: "mine"}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Read(ctx, "default", 1); err != nil {
				t.Fatal(err)
			}
			// The pools let their connections go, as they do idle ones.
			d.w.SetMaxIdleConns(0)
			d.r.SetMaxIdleConns(0)
			if err := os.Remove(d.Path()); err != nil {
				t.Fatal(err)
			}
			tc.put(t, other, d.Path())

			err = d.Append(ctx, "default", store.Event{Seq: 2, Kind: store.KindMessage, Text: "into the other's?"})
			if !errors.Is(err, tc.want) {
				t.Errorf("append: %v, want %v", err, tc.want)
			}
			es, err := d.Read(ctx, "default", 1)
			if !errors.Is(err, tc.want) {
				t.Errorf("read: %d events, %v, want %v", len(es), err, tc.want)
			}
			if after := listing(t, otherChats); !slices.Equal(after, before) {
				t.Errorf("the other agent's folder was\n%v\nis\n%v", before, after)
			}
			od, err = Open(otherChats)
			if err != nil {
				t.Fatal(err)
			}
			defer od.Close()
			if es, err := od.Read(ctx, "default", 1); err != nil || len(es) != 1 {
				t.Errorf("the other agent's conversation: %d events, %v, want its 1", len(es), err)
			}
		})
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
