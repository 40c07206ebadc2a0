//go:build !unix

package fsx

import (
	"io/fs"
	"os"
)

// Open is os.OpenFile where the poller's cost isn't known, refusing a
// name that is a symbolic link (ErrSymlink), looked at just before.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return os.OpenFile(name, flag, perm)
}

// Rename is os.Rename.
func Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// OpenRegular opens name for reading as Open does, never through a link,
// and only when it is a regular file (ErrNotRegular otherwise).
func OpenRegular(name string) (*os.File, error) {
	f, err := Open(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = ErrNotRegular
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}
