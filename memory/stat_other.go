//go:build !unix

package memory

import (
	"os"
	"path/filepath"
)

// statIn looks at name (a path relative to the open folder dir) without
// following a link at its end: its stamp, its size, and whether it is a
// regular file.
func statIn(dir *os.File, name string) (stamp string, size int64, regular bool) {
	info, err := os.Lstat(filepath.Join(dir.Name(), filepath.FromSlash(name)))
	if err != nil {
		return "", 0, false
	}
	return stampOf(info.ModTime().UnixNano(), info.Size()), info.Size(), info.Mode().IsRegular()
}
