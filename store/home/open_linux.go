package home

import (
	"github.com/lnk-dev/link/store"
	"io/fs"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) is found missing (an old kernel, a
// sandbox that refuses it): every open goes through os.Root since.
var noOpenat2 atomic.Bool

// how opens beneath the folder given, refusing every link.
var how = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
}

// open opens name of agent's home for reading, a folder when dir.
func (f Files) open(agent, name string, dir bool) (*os.File, error) {
	if err := store.CheckFileName(name); err != nil {
		return nil, err
	}
	home, err := f.root(agent)
	if err != nil {
		return nil, err
	}
	if noOpenat2.Load() {
		return openRooted(home, name)
	}
	hfd, err := retry(func() (int, error) {
		return unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_PATH, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(hfd)
	h := how
	if dir {
		h.Flags |= unix.O_DIRECTORY
	}
	fd, err := retry(func() (int, error) { return unix.Openat2(hfd, name, &h) })
	switch err {
	case nil:
		return os.NewFile(uintptr(fd), name), nil
	case unix.ENOSYS, unix.EPERM:
		noOpenat2.Store(true)
		return openRooted(home, name)
	case unix.ELOOP, unix.EXDEV:
		// ELOOP: a link on the way (RESOLVE_NO_SYMLINKS, O_NOFOLLOW);
		// EXDEV: a way out of the home.
		return nil, refused(name)
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: err}
}

// lstat is Lstat of name in agent's home, no link on the way.
func (f Files) lstat(agent, name string) (fs.FileInfo, error) {
	if err := store.CheckFileName(name); err != nil {
		return nil, err
	}
	home, err := f.root(agent)
	if err != nil {
		return nil, err
	}
	if noOpenat2.Load() {
		return lstatRooted(home, name)
	}
	hfd, err := retry(func() (int, error) {
		return unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_PATH, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	defer unix.Close(hfd)
	// O_PATH with O_NOFOLLOW opens a last element that is a link as the
	// link itself, so its Stat says it is one.
	h := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: how.Resolve}
	fd, err := retry(func() (int, error) { return unix.Openat2(hfd, name, &h) })
	switch err {
	case nil:
	case unix.ENOSYS, unix.EPERM:
		noOpenat2.Store(true)
		return lstatRooted(home, name)
	case unix.ELOOP, unix.EXDEV:
		return nil, refused(name)
	default:
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	file := os.NewFile(uintptr(fd), name)
	defer file.Close()
	return file.Stat()
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
