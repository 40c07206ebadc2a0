//go:build unix

package fsx

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the flock of the open file fd; without wait, got is
// false when another holds a lock that bars it.
func lockFile(fd uintptr, exclusive, wait bool) (got bool, err error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		switch err := unix.Flock(int(fd), how); err {
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
// event, memory's for its notes. The lock had is the lock of the folder
// dir names when it is had: one renamed aside while its lock was waited
// for (a convert putting a conversation's new folder in place) is let go,
// and the one in its place locked.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return lockDir(ctx, d, dir)
}

// lockDir locks d, the folder opened at dir, and again whatever dir names
// once it is had, until the two are one folder.
func lockDir(ctx context.Context, d *os.File, dir string) (unlock func(), err error) {
	for {
		if err := Lock(ctx, d, true); err != nil {
			d.Close()
			return nil, err
		}
		held, err := d.Stat()
		if err != nil {
			d.Close()
			return nil, err
		}
		now, err := os.Lstat(dir)
		if err == nil && os.SameFile(held, now) {
			return func() { d.Close() }, nil
		}
		d.Close()
		if err != nil {
			return nil, err
		}
		if d, err = Open(dir, os.O_RDONLY, 0); err != nil {
			return nil, err
		}
	}
}
