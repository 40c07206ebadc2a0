package home

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// noOpenat2 is set once openat2(2) is found missing (an old kernel, a
// sandbox that refuses it): every open goes through os.Root since.
var noOpenat2 atomic.Bool

// resolve holds an open beneath the folder given, refusing every link.
const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// open opens name of agent's home for reading, a folder when dir.
func (f Files) open(agent, name string, dir bool) (*os.File, error) {
	flags := uint64(unix.O_RDONLY | unix.O_CLOEXEC)
	if dir {
		flags |= unix.O_DIRECTORY
	} else {
		// A named pipe's open would wait for a writer, for good: opened
		// without waiting, and refused (fsx.CheckRegular).
		flags |= unix.O_NONBLOCK
	}
	file, home, err := f.beneath(agent, name, flags)
	if err == errNoOpenat2 {
		return openRooted(home, name)
	}
	return file, err
}

// lstat is Lstat of name in agent's home, no link on the way.
func (f Files) lstat(agent, name string) (fs.FileInfo, error) {
	// O_PATH with O_NOFOLLOW opens a last element that is a link as the
	// link itself, so its Stat says it is one.
	file, home, err := f.beneath(agent, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW)
	if err == errNoOpenat2 {
		return lstatRooted(home, name)
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return file.Stat()
}

// sysOpenat2 is openat2(2), a test's to count.
var sysOpenat2 = unix.Openat2

// errNoOpenat2: the system has no openat2(2); go the portable way.
var errNoOpenat2 = errors.New("no openat2")

// beneath opens name of agent's home with flags by one openat2(2)
// beneath the home, and gives the home too: errNoOpenat2 asks the caller
// to go the portable way there.
func (f Files) beneath(agent, name string, flags uint64) (*os.File, string, error) {
	if err := store.CheckFileName(name); err != nil {
		return nil, "", err
	}
	home, err := f.root(agent)
	if err != nil {
		return nil, "", err
	}
	if noOpenat2.Load() {
		return nil, home, errNoOpenat2
	}
	hfd, err := retry(func() (int, error) {
		return unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_PATH, 0)
	})
	if err != nil {
		return nil, home, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(hfd)
	how := unix.OpenHow{Flags: flags, Resolve: resolve}
	fd, err := retry(func() (int, error) { return sysOpenat2(hfd, name, &how) })
	switch err {
	case nil:
		if flags&unix.O_NONBLOCK != 0 {
			if err := fsx.CheckRegular(fd, true); err != nil {
				unix.Close(fd)
				return nil, home, &fs.PathError{Op: "open", Path: name, Err: err}
			}
		}
		return os.NewFile(uintptr(fd), name), home, nil
	case unix.ENOSYS, unix.EPERM:
		noOpenat2.Store(true)
		return nil, home, errNoOpenat2
	case unix.ELOOP, unix.EXDEV:
		// ELOOP: a link on the way (RESOLVE_NO_SYMLINKS); EXDEV: a way
		// out of the home.
		return nil, home, refused(name)
	}
	return nil, home, &fs.PathError{Op: "open", Path: name, Err: err}
}

// retry runs open again while it is interrupted.
func retry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}
