package log

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data and the size it grew to: on Linux fdatasync,
// which skips the times no read needs.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
