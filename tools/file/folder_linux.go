package file

import (
	"context"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
)

// kfolder is a folder of the workspace opened by openat2(2): its
// descriptor, and its path in the workspace.
type kfolder struct {
	f   *os.File
	fd  int
	rel string
}

// Resolving beneath a folder: rel, a path a call named, may follow links
// that stay inside the workspace (RESOLVE_BENEATH refuses every other,
// EXDEV) but never a /proc magic link; a walk's one element follows none.
const (
	resolveRel  = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS
	resolveName = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS
)

// noOpenat2 is set once openat2 is found refused (ENOSYS, or EPERM from
// a seccomp filter): the os.Root way is taken since. A test sets it to
// prove that way on Linux.
var noOpenat2 atomic.Bool

func openKernelRoot(dir string) (folder, error) {
	if noOpenat2.Load() {
		return nil, errNoKernel
	}
	fd, err := retry(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "the workspace", Err: err}
	}
	// Probe once: openat2 of the folder itself.
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolveRel}
	probe, err := retry(func() (int, error) { return unix.Openat2(fd, ".", &how) })
	if err == unix.ENOSYS || err == unix.EPERM {
		unix.Close(fd)
		noOpenat2.Store(true)
		return nil, errNoKernel
	}
	if err == nil {
		unix.Close(probe)
	}
	return newKfolder(fd, "."), nil
}

func newKfolder(fd int, rel string) *kfolder {
	return &kfolder{f: os.NewFile(uintptr(fd), rel), fd: fd, rel: rel}
}

// openat2 opens rel beneath k with flags, resolving as res says; a file
// it makes is 0666 less the umask.
func (k *kfolder) openat2(rel string, flags uint64, res uint64) (int, error) {
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: res}
	if flags&unix.O_CREAT != 0 {
		how.Mode = 0o666
	}
	fd, err := retry(func() (int, error) { return unix.Openat2(k.fd, rel, &how) })
	switch err {
	case nil:
		return fd, nil
	case unix.EXDEV:
		return -1, errOutside
	case unix.ELOOP:
		if res&unix.RESOLVE_NO_SYMLINKS != 0 {
			return -1, errLink
		}
		return -1, errLoop
	}
	return -1, &fs.PathError{Op: "open", Path: rel, Err: err}
}

func (k *kfolder) openFile(rel string) (*os.File, error) {
	return k.regular(rel, resolveRel)
}

func (k *kfolder) childFile(name string) (*os.File, error) {
	return k.regular(name, resolveName)
}

// regular opens rel for reading without waiting (a named pipe's open
// would wait for a writer), then refuses it unless a regular file.
func (k *kfolder) regular(rel string, res uint64) (*os.File, error) {
	fd, err := k.openat2(rel, unix.O_RDONLY|unix.O_NONBLOCK, res)
	if err != nil {
		return nil, err
	}
	if err := fsx.CheckRegular(fd, false); err != nil {
		if err == fsx.ErrNotRegular {
			err = errNotRegular
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				err = unix.EISDIR
			}
		}
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// readFile makes four calls of the kernel: openat2 (without waiting),
// fstat (a regular file, its size), one read, close.
func (k *kfolder) readFile(name string, max int, buf []byte) ([]byte, bool, error) {
	fd, err := k.openat2(name, unix.O_RDONLY|unix.O_NONBLOCK, resolveName)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, errNotRegular
	}
	// One byte past the size finds the end in the same read; a file
	// grown meanwhile is read on.
	want := min(int(st.Size)+1, max+1)
	if cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	b := buf[:0]
	for len(b) <= max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		end := min(cap(b), max+1)
		n, err := unix.Read(fd, b[len(b):end])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		b = b[:len(b)+n]
		// A short read at the size fstat said is the end, without a
		// read more to see it.
		if n == 0 || (len(b) < end && len(b) >= int(st.Size)) {
			return b, false, nil
		}
	}
	return b[:max], true, nil
}

func (k *kfolder) openFolder(rel string, mk bool) (folder, error) {
	fd, err := k.openat2(rel, unix.O_RDONLY|unix.O_DIRECTORY, resolveRel)
	if err == nil || !mk || !isNotExist(err) {
		if err != nil {
			return nil, err
		}
		return newKfolder(fd, path.Join(k.rel, rel)), nil
	}
	// Made one element at a time, each beneath the one before.
	cur := k
	els := strings.Split(rel, "/")
	for i, el := range els {
		fd, err := cur.openat2(el, unix.O_RDONLY|unix.O_DIRECTORY, resolveRel)
		if isNotExist(err) {
			if err = unix.Mkdirat(cur.fd, el, 0o777); err == nil || err == unix.EEXIST {
				fd, err = cur.openat2(el, unix.O_RDONLY|unix.O_DIRECTORY, resolveRel)
			}
		}
		if cur != k {
			cur.close()
		}
		if err != nil {
			return nil, err
		}
		cur = newKfolder(fd, path.Join(append([]string{k.rel}, els[:i+1]...)...))
	}
	return cur, nil
}

func (k *kfolder) child(name string) (folder, error) {
	fd, err := k.openat2(name, unix.O_RDONLY|unix.O_DIRECTORY, resolveName)
	if err != nil {
		return nil, err
	}
	return newKfolder(fd, path.Join(k.rel, name)), nil
}

func (k *kfolder) list(max int) ([]fs.DirEntry, error) {
	return readDir(k.f, max)
}

func (k *kfolder) lstat(name string) (fs.FileInfo, error) {
	// O_PATH with O_NOFOLLOW opens a last element that is a link as the
	// link itself, so its Stat says it is one.
	fd, err := k.openat2(name, unix.O_PATH|unix.O_NOFOLLOW, resolveName)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Stat()
}

func (k *kfolder) create(name string) (*os.File, error) {
	fd, err := k.openat2(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, resolveName)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (k *kfolder) remove(name string) error {
	return unix.Unlinkat(k.fd, name, 0)
}

func (k *kfolder) rename(from, to string) error {
	return unix.Renameat(k.fd, from, k.fd, to)
}

func (k *kfolder) sync() error { return fsx.Fsync(k.f) }

func (k *kfolder) lock(ctx context.Context) (func(), error) {
	// flock on a folder of its own open: released at unlock, or when the
	// process dies.
	fd, err := k.openat2(".", unix.O_RDONLY|unix.O_DIRECTORY, resolveName)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), k.rel)
	if err := fsx.Lock(ctx, f, true); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (k *kfolder) close() { k.f.Close() }

// retry runs open again while it is interrupted.
func retry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func isNotExist(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Err == unix.ENOENT
}
