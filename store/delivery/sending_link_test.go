package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// The folder of the answers sending (chats/sending), or an older Link's
// (chats/telling), that is a symbolic link to another agent's is never
// followed: its held answers are not read, adopted or moved in, and none
// of this agent's is written there.
func TestSendingFolderLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	home := t.TempDir()
	work, err := store.For(home, "work")
	if err != nil {
		t.Fatal(err)
	}
	theirs := &Answers{Paths: work}
	id, err := NewID("telegram:7")
	if err != nil {
		t.Fatal(err)
	}
	if err := theirs.Hold(ctx, Answer{ID: id, Thread: "telegram:7", Text: "work's private answer"}, false); err != nil {
		t.Fatal(err)
	}
	theirDir := filepath.Join(work.Chats(), SendingDir)
	before, _ := os.ReadDir(theirDir)

	for _, name := range []string{SendingDir} {
		t.Run(name, func(t *testing.T) {
			p, err := store.For(t.TempDir(), "main")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(p.Chats(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(theirDir, filepath.Join(p.Chats(), name)); err != nil {
				t.Fatal(err)
			}
			mine := &Answers{Paths: p}
			got, err := mine.Sending(ctx)
			if !errors.Is(err, fsx.ErrSymlink) && len(got) != 0 {
				t.Fatalf("read through the link: %+v, %v", got, err)
			}
			if name == SendingDir {
				if err := mine.Hold(ctx, Answer{ID: mustID(t, "telegram:1"), Thread: "telegram:1", Text: "main's answer"}, false); !errors.Is(err, fsx.ErrSymlink) {
					t.Fatalf("held through the link: %v", err)
				}
			}
			if _, err := mine.HandOver(ctx, false, nil); err != nil && !errors.Is(err, fsx.ErrSymlink) {
				t.Fatal(err)
			}
			after, _ := os.ReadDir(theirDir)
			if len(after) != len(before) || len(after) == 0 || after[0].Name() != before[0].Name() {
				t.Fatalf("the other agent's sending folder changed: %v, was %v", after, before)
			}
		})
	}
}

func mustID(t *testing.T, thread string) string {
	t.Helper()
	id, err := NewID(thread)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
