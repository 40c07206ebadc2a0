//go:build unix

package log

import (
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes how on f as a flock without waiting; got is false when
// another holds a lock that bars it.
func tryLock(f *os.File, how lockHow) (got bool, err error) {
	op := unix.LOCK_SH
	if how == exclusive {
		op = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), op|unix.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		}
		return false, err
	}
}
