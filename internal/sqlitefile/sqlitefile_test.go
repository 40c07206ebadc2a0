package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
)

// Each connection a Connector opens is the file Check checked: once a
// symbolic link (fsx.ErrSymlink) or another file (ErrReplaced) is in its
// place, the pool's next connection is refused, and the other file is
// neither read nor written; Names tells the hard link.
func TestConnectorRefusesAnother(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		put   func(other, path string) error
		want  error
		names uint64
	}{
		{"link", os.Symlink, fsx.ErrSymlink, 1},
		{"hard link", os.Link, ErrReplaced, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			other := filepath.Join(dir, "other.sqlite")
			theirs := open(t, other)
			if _, err := theirs.ExecContext(ctx, "CREATE TABLE theirs(x)"); err != nil {
				t.Fatal(err)
			}
			if err := theirs.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "mine.sqlite")
			db := open(t, path)
			defer db.Close()
			db.SetMaxIdleConns(0) // each call opens a connection
			if _, err := db.ExecContext(ctx, "CREATE TABLE t(x)"); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.put(other, path); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "CREATE TABLE u(x)"); !errors.Is(err, tc.want) {
				t.Errorf("write: %v, want %v", err, tc.want)
			}
			if after, err := os.ReadFile(other); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the other file changed (%v)", err)
			}
			for _, s := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Lstat(other + s); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s made beside the other file: %v", s, err)
				}
			}
			fi, err := os.Stat(other)
			if err != nil {
				t.Fatal(err)
			}
			if n, known := Names(fi); known && n != tc.names {
				t.Errorf("names of the other file: %d, want %d", n, tc.names)
			}
		})
	}
}

// open is a pool of connections to the file at path, checked.
func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	checked, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConnector(DSN(path, "_pragma=busy_timeout(1000)"), path, checked, "PRAGMA journal_mode = WAL")
	if err != nil {
		t.Fatal(err)
	}
	return sql.OpenDB(c)
}

// Check refuses a database, or its WAL, that is a symbolic link, and
// makes nothing where it points.
func TestCheckLink(t *testing.T) {
	for _, name := range []string{"db.sqlite", "db.sqlite-wal"} {
		dir := t.TempDir()
		elsewhere := filepath.Join(t.TempDir(), "target")
		if err := os.Symlink(elsewhere, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if _, err := Check(filepath.Join(dir, "db.sqlite")); !errors.Is(err, fsx.ErrSymlink) {
			t.Errorf("%s a link: %v, want fsx.ErrSymlink", name, err)
		}
		if _, err := os.Lstat(elsewhere); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s a link: made where it points (%v)", name, err)
		}
	}
}
