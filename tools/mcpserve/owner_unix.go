//go:build unix

package mcpserve

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe says whether fi (from Stat or Lstat) is this process's
// user's.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
