//go:build unix

package memory

import (
	"os"

	"golang.org/x/sys/unix"
)

// statIn looks at name (a path relative to the open folder dir) without
// following a link at its end and without walking the folder's path
// again (fstatat): its stamp, its size, and whether it is a regular
// file.
func statIn(dir *os.File, name string) (stamp string, size int64, regular bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", 0, false
	}
	return stampOf(st.Mtim.Sec*1e9+st.Mtim.Nsec, st.Size), st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG
}
