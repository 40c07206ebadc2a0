//go:build !linux

package fsx

import (
	"errors"
	"os"
)

// Datasync flushes f's data, and its size if it grew, to the disk:
// f.Sync (on macOS a full flush, F_FULLFSYNC).
func Datasync(f Handle) error { return Fsync(f) }

// Fsync flushes f to the disk: f.Sync.
func Fsync(f Handle) error {
	switch f := f.(type) {
	case *os.File:
		return f.Sync()
	case *File:
		return f.sync()
	}
	return &os.PathError{Op: "sync", Path: f.Name(), Err: errors.ErrUnsupported}
}
