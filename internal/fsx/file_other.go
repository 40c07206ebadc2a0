//go:build !linux

package fsx

import (
	"os"
	"syscall"
)

// File is an open file read and written at offsets: the store's files
// opened at every turn (a conversation's log and lease). Off Linux it is
// an *os.File. Open it with OpenFile, close it once; it is not for two
// goroutines at once.
type File struct {
	f *os.File
}

// OpenFile opens name as Open does (never through a symbolic link:
// ErrSymlink), as a File.
func OpenFile(name string, flag int, perm os.FileMode) (*File, error) {
	f, err := Open(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{f: f}, nil
}

// Name is the name f was opened by.
func (f *File) Name() string { return f.f.Name() }

// ReadAt reads len(b) bytes from off, as io.ReaderAt says.
func (f *File) ReadAt(b []byte, off int64) (int, error) { return f.f.ReadAt(b, off) }

// WriteAt writes b at off, all of it or an error.
func (f *File) WriteAt(b []byte, off int64) (int, error) { return f.f.WriteAt(b, off) }

// Write writes b at f's offset (its end, opened with O_APPEND), all of
// it or an error.
func (f *File) Write(b []byte) (int, error) { return f.f.Write(b) }

// Size is f's length in bytes.
func (f *File) Size() (int64, error) {
	info, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// Stamp is f's stamp: its size alone here, no identity or birth, so no
// two stamps are taken for one file unchanged.
func (f *File) Stamp() (Stamp, error) {
	info, err := f.f.Stat()
	if err != nil {
		return Stamp{}, err
	}
	return Stamp{Size: info.Size()}, nil
}

// SameFile says whether f is the file info describes (os.SameFile).
func (f *File) SameFile(info os.FileInfo) (bool, error) {
	mine, err := f.f.Stat()
	if err != nil {
		return false, err
	}
	return os.SameFile(mine, info), nil
}

// Truncate cuts f, or grows it, to size bytes.
func (f *File) Truncate(size int64) error { return f.f.Truncate(size) }

// Close closes f; its lock, if it took one, goes with it.
func (f *File) Close() error { return f.f.Close() }

// SyscallConn hands f's descriptor to a call (Lock).
func (f *File) SyscallConn() (syscall.RawConn, error) { return f.f.SyscallConn() }

// sync flushes f to the disk (f.Sync).
func (f *File) sync() error { return f.f.Sync() }

// descriptor is false: off Linux a File's descriptor is its *os.File's,
// handed over through its RawConn.
func descriptor(Handle) (uintptr, bool) { return 0, false }
