// Package fsx holds the store's file calls where the os package costs more
// than needed or differs by platform: Open, outside the runtime's poller
// and never through a symbolic link; File (OpenFile), a file read and
// written at offsets with nothing but its descriptor, for the files a
// conversation's every call opens; Datasync and Fsync, a file flushed to
// the disk without holding a P while the disk works, where other flushes
// wait too; SyncDir, a folder's names made durable; Lock, an open file's
// lock (flock, or LockFileEx on Windows), the one lock of a conversation
// its drivers take; LockDir, a folder's lock between processes; and
// CheckWritable, whether a folder can be written.
//
// Open: the store's per-message path opens files without the runtime's
// poller. On Linux a regular file or a folder is never pollable, yet
// os.OpenFile tries: four fcntl calls and an epoll_ctl that fails, on
// every open. The store opens a dozen files for each message (its log,
// its lease, the folder's lock, the copy for people), so Open makes the
// one open(2) and hands the descriptor to os.NewFile, which asks its
// flags once (one fcntl) and leaves it out of the poller. OpenFile makes
// the one open(2) and nothing else: the log's events.jsonl, opened at
// each of a turn's six calls, and the lease.
package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrSymlink is Open's refusal of a name that is a symbolic link: the store
// never follows one out of its folders.
var ErrSymlink = errors.New("a symbolic link, not followed")

// ErrNotRegular is OpenRegular's refusal of a name that is not a regular
// file: a named pipe, whose open and reads could wait for good, a
// socket or a device.
var ErrNotRegular = errors.New("not a regular file (a named pipe, a socket or a device), never read")

// WriteFile writes b to name as os.WriteFile does, through Open: a name
// that is a symbolic link is refused (ErrSymlink), not written through.
func WriteFile(name string, b []byte, perm os.FileMode) error {
	f, err := Open(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads the whole of name as os.ReadFile does, through Open.
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 512
	if info, err := f.Stat(); err == nil && info.Size() > 0 && info.Size() < 1<<30 {
		size = int(info.Size()) + 1
	}
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// SyncDir makes the names in dir durable: a file made, renamed or removed
// in it, or a folder made. Windows won't flush a folder (its renames are
// their own), so there it does nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = Fsync(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Join is filepath.Join(dir, name) for a dir already clean and a name of
// one element (no separator, neither "." nor ".."), as a conversation's
// folder and its files are named: without Clean's pass over the whole
// path, which filepath.Join makes at every call.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
