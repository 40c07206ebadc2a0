//go:build unix

package serve

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"golang.org/x/sys/unix"
)

// TestReadSettingsNamedPipe: a config.json that is a named pipe is refused
// at once, naming why; its open waited for a writer for good, and every
// turn of the agent with it (the settings are read at each).
func TestReadSettingsNamedPipe(t *testing.T) {
	p, err := store.For(t.TempDir(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p.Config(), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadSettings(t.Context(), p, "")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fsx.ErrNotRegular) {
			t.Fatalf("config.json a named pipe: %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the settings' read of a named pipe still waits after 10 s")
	}
}
