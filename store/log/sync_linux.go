package log

import (
	"os"

	"github.com/lnk-dev/link/internal/fsx"
)

// datasync flushes f's data and the size it grew to: on Linux
// fdatasync, which skips the times no read needs, asked of the kernel
// without holding a P while the disk works (fsx.Datasync).
func datasync(f *os.File) error { return fsx.Datasync(f) }
