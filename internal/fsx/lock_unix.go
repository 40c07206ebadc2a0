//go:build unix

package fsx

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes f's flock; without wait, got is false when another holds
// a lock that bars it.
func lockFile(f *os.File, exclusive, wait bool) (got bool, err error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		switch err := unix.Flock(int(f.Fd()), how); err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		default:
			return false, err
		}
	}
}

// LockDir takes the lock of folder dir, waiting until it is had or ctx
// ends. It is the folder's own lock (Lock on the open folder), so it needs
// no file of its own, and every process takes it through its own open
// folder: the store's for what a conversation's folder keeps that isn't an
// event, memory's for its notes.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if err := Lock(ctx, d, true); err != nil {
		d.Close()
		return nil, err
	}
	return func() { d.Close() }, nil
}
