//go:build windows

package compact

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is where the lock's one byte is: far past any data, since a
// Windows lock also bars others' reads and writes of the bytes it covers.
const lockOffset = 1 << 62

// flock takes a lock on one byte of f, shared or exclusive; without wait,
// a lock held by another is errLocked.
func flock(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffset >> 32}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if err == windows.ERROR_LOCK_VIOLATION {
		return errLocked
	}
	return err
}
