//go:build windows

package log

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is where the lock's one byte is: far past any data, since a
// Windows lock also bars others' reads and writes of the bytes it covers.
const lockOffset = 1 << 62

// tryLock takes how on one byte of f with LockFileEx without waiting; got
// is false when another handle holds a lock that bars it. Like a flock,
// the lock is the handle's, so two opens in one process contend as two
// processes do, and closing f lets it go.
func tryLock(f *os.File, how lockHow) (got bool, err error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if how == exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffset >> 32}
	switch err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol); err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION:
		return false, nil
	default:
		return false, err
	}
}
