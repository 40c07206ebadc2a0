//go:build !linux

package fsx

import "os"

// Datasync flushes f's data, and its size if it grew, to the disk:
// f.Sync (on macOS a full flush, F_FULLFSYNC).
func Datasync(f *os.File) error { return f.Sync() }

// Fsync flushes f to the disk: f.Sync.
func Fsync(f *os.File) error { return f.Sync() }
