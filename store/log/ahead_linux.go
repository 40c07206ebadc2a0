package log

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to only if to isn't there: renameat2's
// RENAME_NOREPLACE, fs.ErrExist when it is.
var renameNoReplace = func(from, to string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
}

// unsupported says err is a file system's refusal of RENAME_NOREPLACE.
func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}
