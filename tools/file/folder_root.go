package file

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// rfolder is a folder of the workspace as an os.Root, which holds every
// lookup beneath it: the way where the kernel's openat2 isn't had.
type rfolder struct {
	root *os.Root
	dir  string // its name on the machine: the key of its lock, never said
	rel  string // its path in the workspace
}

func openRootedFolder(dir string) (folder, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "the workspace", Err: cause(err)}
	}
	return &rfolder{root: r, dir: dir, rel: "."}, nil
}

// rootErr is err of an os.Root's lookup as the kernel's would be: a way
// out of the root is errOutside. os.Root says so by its words alone.
func rootErr(err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "path escapes from parent"):
		return errOutside
	case errors.Is(err, syscall.ELOOP):
		return errLoop
	}
	return err
}

// readFlags opens a file for reading without waiting where the system
// can: a named pipe's open would wait for a writer.
func readFlags() int {
	if runtime.GOOS == "windows" {
		return os.O_RDONLY
	}
	return os.O_RDONLY | syscall.O_NONBLOCK
}

func (r *rfolder) openFile(rel string) (*os.File, error) {
	f, err := r.root.OpenFile(rel, readFlags(), 0)
	if err != nil {
		return nil, rootErr(err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
		if fi.IsDir() {
			err = syscall.EISDIR
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (r *rfolder) openFolder(rel string, mk bool) (folder, error) {
	if mk {
		if err := r.root.MkdirAll(rel, 0o777); err != nil {
			return nil, rootErr(err)
		}
	}
	sub, err := r.root.OpenRoot(rel)
	if err != nil {
		return nil, rootErr(err)
	}
	return &rfolder{root: sub, dir: filepath.Join(r.dir, filepath.FromSlash(rel)), rel: path.Join(r.rel, rel)}, nil
}

// noLink refuses name when it is a link.
func (r *rfolder) noLink(name string) error {
	fi, err := r.root.Lstat(name)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return errLink
	}
	return nil
}

func (r *rfolder) child(name string) (folder, error) {
	if err := r.noLink(name); err != nil {
		return nil, err
	}
	return r.openFolder(name, false)
}

func (r *rfolder) childFile(name string) (*os.File, error) {
	if err := r.noLink(name); err != nil {
		return nil, err
	}
	return r.openFile(name)
}

func (r *rfolder) readFile(name string, max int, buf []byte) ([]byte, bool, error) {
	f, err := r.childFile(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readUpTo(f, max, buf)
}

func (r *rfolder) list(max int) ([]fs.DirEntry, error) {
	d, err := r.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return readDir(d, max)
}

func (r *rfolder) lstat(name string) (fs.FileInfo, error) {
	fi, err := r.root.Lstat(name)
	return fi, rootErr(err)
}

func (r *rfolder) create(name string) (*os.File, error) {
	f, err := r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	return f, rootErr(err)
}

func (r *rfolder) remove(name string) error { return r.root.Remove(name) }

func (r *rfolder) rename(from, to string) error { return r.root.Rename(from, to) }

func (r *rfolder) sync() error {
	if runtime.GOOS == "windows" {
		return nil // Windows won't flush a folder; its renames are their own
	}
	d, err := r.root.Open(".")
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *rfolder) lock(ctx context.Context) (func(), error) { return lockKey(ctx, r.dir) }

func (r *rfolder) close() { r.root.Close() }

// readUpTo reads f to its end into buf, at most max bytes: more is cut,
// said by cut.
func readUpTo(f io.Reader, max int, buf []byte) ([]byte, bool, error) {
	b := buf[:0]
	for len(b) <= max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(cap(b), max+1)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	return b[:max], true, nil
}
