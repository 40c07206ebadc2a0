//go:build unix

package home

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"golang.org/x/sys/unix"
)

// TestNamedPipeRefused: a file of the home that is a named pipe (made by
// its owner, or a tool) is refused at once, saying so, where an open of
// it waited for a writer for good, holding the turn that read it.
func TestNamedPipeRefused(t *testing.T) { namedPipeRefused(t) }

func namedPipeRefused(t *testing.T) {
	f, root := agentHome(t, map[string]string{"instructions/other.md": "x"})
	if err := unix.Mkfifo(filepath.Join(root, "instructions", "persona.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.ReadFile(context.Background(), "main", "instructions/persona.md", 1<<10)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrNotRegular) {
			t.Fatalf("a named pipe read: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read of a named pipe still waits after 10 s")
	}
	if _, err := f.ReadFile(context.Background(), "main", "instructions/other.md", 1<<10); err != nil {
		t.Fatalf("a regular file beside it: %v", err)
	}
}
