//go:build linux && !(amd64 || arm64)

package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// Datasync flushes f's data, and its size if it grew, to the disk:
// fdatasync(2), which skips the times no read needs.
func Datasync(f Handle) error { return syncFile(f, unix.Fdatasync) }

// Fsync flushes f to the disk: fsync(2).
func Fsync(f Handle) error { return syncFile(f, unix.Fsync) }

// syncFile calls sync on f's descriptor, again when interrupted.
func syncFile(f Handle, sync func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := rc.Control(func(fd uintptr) {
		for {
			if err = sync(int(fd)); err != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return nil
}
