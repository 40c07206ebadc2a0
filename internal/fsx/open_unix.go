//go:build unix

package fsx

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Open opens name with flag (os.O_*) and perm for a file it makes, close
// on exec, as os.OpenFile does but outside the poller, and never through
// a symbolic link: a name that is one is ErrLink (O_NOFOLLOW). Its errors
// are *fs.PathError, so errors.Is(err, fs.ErrNotExist) holds as it does
// for os.OpenFile's.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC|unix.O_NOFOLLOW, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err == unix.ELOOP {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrLink}
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
