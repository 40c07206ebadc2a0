//go:build unix

package fsx

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Open opens name with flag (os.O_*) and perm for a file it makes, close
// on exec, as os.OpenFile does but outside the poller, and never through
// a symbolic link: a name that is one is ErrSymlink (O_NOFOLLOW). Its errors
// are *fs.PathError, so errors.Is(err, fs.ErrNotExist) holds as it does
// for os.OpenFile's.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openFD(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFD is Open's open(2), giving the descriptor.
func openFD(name string, flag int, perm os.FileMode) (int, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC|unix.O_NOFOLLOW, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err == unix.ELOOP {
			return -1, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return fd, nil
	}
}

// Rename renames oldname to newname with one rename(2): os.Rename first
// looks at newname (an lstat), to refuse a folder there, which a caller
// renaming a file to a name it made needn't. Its errors are
// *os.LinkError, as os.Rename's.
func Rename(oldname, newname string) error {
	for {
		err := unix.Rename(oldname, newname)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
		}
		return nil
	}
}

// OpenRegular opens name for reading as Open does, never through a link,
// and only when it is a regular file: another (a named pipe, whose open
// waits for a writer, a socket, a device) is ErrNotRegular, refused at
// once. It opens without waiting (O_NONBLOCK), then CheckRegular.
func OpenRegular(name string) (*os.File, error) {
	fd, err := openFD(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := CheckRegular(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// CheckRegular looks at fd, opened O_NONBLOCK so that a named pipe's open
// waits for no writer: ErrNotRegular unless it is a regular file (or,
// with folders, a folder), whose reads never wait for good; then it
// clears O_NONBLOCK, so the file is read as any other, outside the
// poller.
func CheckRegular(fd int, folders bool) error {
	var st unix.Stat_t
	var err error
	for {
		if err = unix.Fstat(fd, &st); err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && !(folders && t == unix.S_IFDIR) {
		return ErrNotRegular
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	return err
}
