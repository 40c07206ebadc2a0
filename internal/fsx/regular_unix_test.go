//go:build unix

package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ReadLimit refuses a named pipe at once (ErrNotRegular), a folder too,
// and reads a regular file as before.
func TestReadLimitNotRegular(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadLimit(pipe, 1<<10)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("a named pipe: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadLimit of a named pipe still waits after 10 s")
	}
	if _, err := ReadLimit(dir, 1<<10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a folder: %v, want ErrNotRegular", err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRegular(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Fatalf("left non-blocking: %#x %v", fl, err)
	}
	if b, err := ReadLimit(file, 1<<10); err != nil || string(b) != "hello" {
		t.Fatalf("a regular file: %q %v", b, err)
	}
}
