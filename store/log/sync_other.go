//go:build !linux

package log

import "os"

// datasync flushes f's data and size where fdatasync isn't had: a full
// sync (on macOS, Go's Sync is F_FULLFSYNC).
func datasync(f *os.File) error { return f.Sync() }
