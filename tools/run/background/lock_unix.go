//go:build unix

package background

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
)

// tryLock takes the lock of the command in dir if no one holds it: got
// is false while its supervisor (or the server starting it) lives, or
// when there is no lock file.
func tryLock(dir string) (unlock func(), got bool, err error) {
	f, err := fsx.Open(filepath.Join(dir, lockFile), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for {
		switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err {
		case nil:
			return func() { f.Close() }, true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			f.Close()
			return nil, false, nil
		default:
			f.Close()
			return nil, false, err
		}
	}
}

// lockHeld says whether the command in dir has a supervisor living (or
// is being started).
func lockHeld(dir string) (bool, error) {
	if !exists(filepath.Join(dir, lockFile)) {
		return false, nil
	}
	unlock, got, err := tryLock(dir)
	if got {
		unlock()
	}
	return !got, err
}

// waitUnlocked waits until no one holds the lock of the command in dir,
// or ctx ends, answering the lock then held.
func waitUnlocked(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := fsx.Open(filepath.Join(dir, lockFile), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if err := fsx.Lock(ctx, f, true); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
