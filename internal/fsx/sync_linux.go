//go:build linux && !(amd64 || arm64)

package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// Datasync flushes f's data, and its size if it grew, to the disk:
// fdatasync(2), which skips the times no read needs.
func Datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// Fsync flushes f to the disk: f.Sync.
func Fsync(f *os.File) error { return f.Sync() }
