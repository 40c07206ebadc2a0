package compact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// A conversation's tail or frames file that is a symbolic link is
// refused by every call that opens it, and nothing is written where it
// points.
func TestLinksRefused(t *testing.T) {
	ctx := t.Context()
	for _, name := range []string{tailName, zstName} {
		chats := t.TempDir()
		d := Open(chats)
		thread := "telegram:1"
		if err := d.Append(ctx, thread, store.Event{Seq: 1, Time: time.Now(), Kind: store.KindMessage, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		dir, err := d.dir(thread)
		if err != nil {
			t.Fatal(err)
		}
		elsewhere := t.TempDir()
		target := filepath.Join(elsewhere, name)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if err := d.Append(ctx, thread, store.Event{Seq: 2, Time: time.Now(), Kind: store.KindAnswer, Text: "ok"}); !errors.Is(err, fsx.ErrSymlink) {
			t.Errorf("%s a link: append %v", name, err)
		}
		if _, err := d.Read(ctx, thread, 1); !errors.Is(err, fsx.ErrSymlink) {
			t.Errorf("%s a link: read %v", name, err)
		}
		if name == zstName {
			if _, err := Thread(dir); !errors.Is(err, fsx.ErrSymlink) {
				t.Errorf("%s a link: Thread %v", name, err)
			}
		}
		if after, _ := os.ReadFile(target); string(after) != string(data) {
			t.Errorf("%s a link: written where it points", name)
		}
	}
}
