//go:build !unix

package fsx

import (
	"io/fs"
	"os"
)

// Open is os.OpenFile where the poller's cost isn't known, refusing a
// name that is a symbolic link (ErrLink), looked at just before.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrLink}
	}
	return os.OpenFile(name, flag, perm)
}

// Rename is os.Rename.
func Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
