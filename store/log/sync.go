package log

import "github.com/lnk-dev/link/internal/fsx"

// datasync flushes f's data and the size it grew to (fsx.Datasync): on
// Linux fdatasync, which skips the times no read needs, asked of the
// kernel without holding a P while the disk works; elsewhere a full sync
// (on macOS F_FULLFSYNC). A benchmark's to leave out (NoSyncs).
var datasync = func(f *fsx.File) error { return fsx.Datasync(f) }
