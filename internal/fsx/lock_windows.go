//go:build windows

package fsx

import "golang.org/x/sys/windows"

// lockOffset is where the lock's one byte is: far past any data, since a
// Windows lock also bars others' reads and writes of the bytes it covers.
const lockOffset = 1 << 62

// lockFile takes a lock on one byte of the file fd with LockFileEx; without wait,
// got is false when another handle holds a lock that bars it. Like a
// flock, the lock is the handle's.
func lockFile(fd uintptr, exclusive, wait bool) (got bool, err error) {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffset >> 32}
	switch err := windows.LockFileEx(windows.Handle(fd), flags, 0, 1, 0, ol); err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION:
		return false, nil
	default:
		return false, err
	}
}
