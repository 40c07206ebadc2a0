//go:build unix

package hub

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"golang.org/x/sys/unix"
)

// TestSessionsFileNotRegular: a sessions.json that is a named pipe, or a
// link to another file, is refused at once, naming why, as answers.json
// beside it is; the pipe's open waited for a writer for good, so the hub
// never started, and the link was followed.
func TestSessionsFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "sessions.json")
	if err := unix.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := openSessions(pipe, slog.New(slog.DiscardHandler), time.Now())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fsx.ErrNotRegular) {
			t.Fatalf("sessions.json a named pipe: %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		w, _ := os.OpenFile(pipe, os.O_WRONLY, 0) // let the open go
		w.Close()
		t.Fatal("the read of a named pipe still waits after 10 s")
	}

	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"threads":{"telegram:1":"theirs"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.json")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if f, err := openSessions(link, slog.New(slog.DiscardHandler), time.Now()); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("sessions.json a link: %v (read %v), want a refusal naming it", err, f)
	}
}
