//go:build unix

package sqlitefile

import (
	"io/fs"
	"syscall"
)

// Names is how many names (hard links) the file fi has, and whether the
// system says.
func Names(fi fs.FileInfo) (n uint64, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
