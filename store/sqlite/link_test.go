package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
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
		if !errors.Is(err, fsx.ErrLink) {
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
