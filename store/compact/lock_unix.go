//go:build unix

package compact

import (
	"os"

	"golang.org/x/sys/unix"
)

// flock takes f's flock, shared or exclusive; without wait, a lock held
// by another is errLocked.
func flock(f *os.File, exclusive, wait bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errLocked
		}
		return err
	}
}
