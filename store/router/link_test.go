package router_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
)

// A thread's folder that is a symbolic link is listed apart by
// ListThreads, for an export to name, and passed over by Threads, as are
// a link with no thread's name and a file with one.
func TestListThreadsLinks(t *testing.T) {
	p := store.Paths{Agent: "a", Root: t.TempDir()}
	elsewhere := t.TempDir()
	for _, th := range []string{"default", "telegram:1"} {
		dir, err := p.Conversation(th)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	linked, err := p.Conversation("telegram:2")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, linked); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(p.Chats(), "not a thread")); err != nil {
		t.Fatal(err)
	}
	file, err := p.Conversation("telegram:3")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	threads, links, err := router.ListThreads(t.Context(), p)
	if err != nil || !slices.Equal(threads, []string{"default", "telegram:1"}) || !slices.Equal(links, []string{"telegram:2"}) {
		t.Fatalf("ListThreads = %q, links %q, %v", threads, links, err)
	}
	if threads, err := router.Threads(t.Context(), p); err != nil || !slices.Equal(threads, []string{"default", "telegram:1"}) {
		t.Fatalf("Threads = %q, %v", threads, err)
	}
}

// The agent's chats folder that is a symbolic link is refused by every
// reader that lists it and by the router, never followed.
func TestChatsLinkRefused(t *testing.T) {
	root := t.TempDir()
	p, other := store.Paths{Agent: "a", Root: filepath.Join(root, "a")}, store.Paths{Agent: "b", Root: filepath.Join(root, "b")}
	dir, err := other.Conversation("telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other.Chats(), p.Chats()); err != nil {
		t.Fatal(err)
	}
	if threads, links, err := router.ListThreads(t.Context(), p); !errors.Is(err, router.ErrChatsSymlink) || !errors.Is(err, fsx.ErrSymlink) || threads != nil || links != nil {
		t.Fatalf("ListThreads = %q, %q, %v", threads, links, err)
	}
	if _, err := router.New(p, log.Name, map[string]store.Conversations{log.Name: noDriver{}}); !errors.Is(err, router.ErrChatsSymlink) {
		t.Fatalf("New: %v", err)
	}
}

// noDriver is a driver the router is given and never calls.
type noDriver struct{ store.Conversations }
