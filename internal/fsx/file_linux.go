package fsx

import (
	"io"
	"io/fs"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File is an open file read and written at offsets: the store's files
// opened at every turn (a conversation's log and lease). On Linux it is
// the descriptor alone, without what os.File adds to each open (a flag
// query, fcntl(2), to choose the poller; a finalizer set, then cleared at
// the close) and to each call (the poller's reference count). Open it
// with OpenFile, close it once; it is not for two goroutines at once.
// Nothing closes a File left open: its holder closes it.
type File struct {
	fd   int // -1 once closed
	name string
}

// OpenFile opens name as Open does (close on exec, never through a
// symbolic link: ErrSymlink), as a File: one open(2).
func OpenFile(name string, flag int, perm os.FileMode) (*File, error) {
	fd, err := openFD(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{fd: fd, name: name}, nil
}

// Name is the name f was opened by.
func (f *File) Name() string { return f.name }

// ReadAt reads len(b) bytes from off, as io.ReaderAt says: fewer only at
// the end of the file (io.EOF) or at an error. A regular file reads short
// only at its end, so one read short is the end, not read again to be
// told so (as os.File's ReadAt does).
func (f *File) ReadAt(b []byte, off int64) (n int, err error) {
	if f.fd < 0 {
		return 0, f.fail("read", os.ErrClosed)
	}
	for len(b) > 0 {
		m, err := unix.Pread(f.fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, f.fail("read", err)
		}
		if m == 0 || m < len(b) && len(b) <= maxRead {
			return n + m, io.EOF
		}
		n, b, off = n+m, b[m:], off+int64(m)
	}
	return n, nil
}

// maxRead is the most one read(2) gives on Linux: a longer read is short
// for that alone.
const maxRead = 0x7ffff000

// WriteAt writes b at off, all of it or an error.
func (f *File) WriteAt(b []byte, off int64) (n int, err error) {
	if f.fd < 0 {
		return 0, f.fail("write", os.ErrClosed)
	}
	for len(b) > 0 {
		m, err := unix.Pwrite(f.fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, f.fail("write", err)
		}
		if m == 0 {
			return n, f.fail("write", io.ErrShortWrite)
		}
		n, b, off = n+m, b[m:], off+int64(m)
	}
	return n, nil
}

// Write writes b at f's offset, all of it or an error: at its end, for a
// file opened with O_APPEND, each write(2) whole there.
func (f *File) Write(b []byte) (n int, err error) {
	if f.fd < 0 {
		return 0, f.fail("write", os.ErrClosed)
	}
	for len(b) > 0 {
		m, err := unix.Write(f.fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, f.fail("write", err)
		}
		if m == 0 {
			return n, f.fail("write", io.ErrShortWrite)
		}
		n, b = n+m, b[m:]
	}
	return n, nil
}

// Size is f's length in bytes: where its end is (lseek(2), which fills
// no stat).
func (f *File) Size() (int64, error) {
	if f.fd < 0 {
		return 0, f.fail("seek", os.ErrClosed)
	}
	for {
		end, err := unix.Seek(f.fd, 0, io.SeekEnd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, f.fail("seek", err)
		}
		return end, nil
	}
}

// Stamp is f's stamp (statx(2) of its descriptor: one call, which
// fills no more than it asks).
func (f *File) Stamp() (Stamp, error) {
	if f.fd < 0 {
		return Stamp{}, f.fail("stat", os.ErrClosed)
	}
	var st unix.Statx_t
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(f.fd), uintptr(unsafe.Pointer(&emptyPath[0])),
			unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_SIZE|unix.STATX_BTIME, uintptr(unsafe.Pointer(&st)), 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return Stamp{}, f.fail("stat", errno)
		}
		break
	}
	s := Stamp{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino, Size: int64(st.Size)}
	if st.Mask&unix.STATX_BTIME != 0 {
		s.Born = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return s, nil
}

// emptyPath is the name statx(2) is given to stat a descriptor itself,
// "" ending in its NUL: made once, not at each call.
var emptyPath = [1]byte{0}

// SameFile says whether f is the file info describes (os.SameFile), info
// as os.Stat or an *os.File's Stat gave it.
func (f *File) SameFile(info os.FileInfo) (bool, error) {
	if f.fd < 0 {
		return false, f.fail("stat", os.ErrClosed)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstat(f.fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, f.fail("stat", err)
		}
		break
	}
	sys, ok := info.Sys().(*syscall.Stat_t)
	return ok && uint64(sys.Dev) == uint64(st.Dev) && uint64(sys.Ino) == uint64(st.Ino), nil
}

// Truncate cuts f, or grows it, to size bytes.
func (f *File) Truncate(size int64) error {
	if f.fd < 0 {
		return f.fail("truncate", os.ErrClosed)
	}
	for {
		err := unix.Ftruncate(f.fd, size)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return f.fail("truncate", err)
		}
		return nil
	}
}

// Close closes f; its lock, if it took one, goes with it. A File closed
// already is os.ErrClosed.
func (f *File) Close() error {
	if f.fd < 0 {
		return f.fail("close", os.ErrClosed)
	}
	fd := f.fd
	f.fd = -1
	// Linux frees the descriptor even when close(2) is interrupted, so it
	// is never closed again.
	if err := unix.Close(fd); err != nil && err != unix.EINTR {
		return f.fail("close", err)
	}
	return nil
}

// SyscallConn hands f's descriptor to a call (Lock, Datasync).
func (f *File) SyscallConn() (syscall.RawConn, error) {
	if f.fd < 0 {
		return nil, f.fail("raw", os.ErrClosed)
	}
	return (*fileConn)(f), nil
}

// descriptor is h's descriptor when h is an open File, handed over as it
// is: no RawConn, and no closure made for it.
func descriptor(h Handle) (uintptr, bool) {
	if f, ok := h.(*File); ok && f.fd >= 0 {
		return uintptr(f.fd), true
	}
	return 0, false
}

// fileConn is a File as a syscall.RawConn: a regular file is always ready,
// so a read or write is tried until it says it is done.
type fileConn File

func (c *fileConn) Control(fn func(fd uintptr)) error {
	fn(uintptr(c.fd))
	return nil
}

func (c *fileConn) Read(fn func(fd uintptr) bool) error {
	for !fn(uintptr(c.fd)) {
	}
	return nil
}

func (c *fileConn) Write(fn func(fd uintptr) bool) error {
	for !fn(uintptr(c.fd)) {
	}
	return nil
}

// fail is err as os.File's calls give it: a *fs.PathError naming f.
func (f *File) fail(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}
