package file

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
)

// folder is a folder of the workspace held open. rel names are paths
// beneath it, resolved by the kernel (or an os.Root), links that stay
// inside followed; name is always one element in it, never followed
// when it is a link. On Linux a folder is a descriptor opened by
// openat2(2) (kfolder); elsewhere, or where openat2 is refused (an old
// kernel, a container's seccomp), an os.Root (rfolder).
type folder interface {
	// openFile opens the regular file rel for reading; any other (a
	// named pipe, whose open would wait for a writer) is errNotRegular,
	// refused without waiting.
	openFile(rel string) (*os.File, error)
	// openFolder opens the folder rel, made first with the folders
	// leading to it when mk.
	openFolder(rel string, mk bool) (folder, error)
	// child opens the folder name, never through a link.
	child(name string) (folder, error)
	// childFile opens the regular file name for reading, never through a
	// link, refusing another kind as openFile does.
	childFile(name string) (*os.File, error)
	// readFile reads the regular file name, never through a link, into
	// buf, at most max bytes: more is cut, said by cut.
	readFile(name string, max int, buf []byte) (b []byte, cut bool, err error)
	// list is the folder's entries, unsorted, at most max of them.
	list(max int) ([]fs.DirEntry, error)
	// lstat is what name is, a link as a link.
	lstat(name string) (fs.FileInfo, error)
	// create makes name anew for writing, 0666 less the umask, refusing
	// one already there (O_EXCL) and never through a link.
	create(name string) (*os.File, error)
	remove(name string) error
	rename(from, to string) error
	// sync makes the folder's names durable.
	sync() error
	// lock takes the folder's lock, which every write and replace in it
	// holds, waiting until it is had or ctx ends.
	lock(ctx context.Context) (unlock func(), err error)
	close()
}

// errNotRegular: a file that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// errClosed: a call made after the workspace's Close.
var errClosed = errors.New("the file tool is closed")

// errLoop: symbolic links that lead to each other, or a /proc magic
// link, on the way: not followed.
var errLoop = errors.New("symbolic links in a loop, or a /proc link")

// errLink: a symbolic link met where none is followed.
var errLink = errors.New("a symbolic link, not followed")

// openRoot opens the workspace's folder dir: by openat2 on Linux while
// the kernel has it, else as an os.Root.
func openRoot(dir string) (folder, error) {
	if f, err := openKernelRoot(dir); err != errNoKernel {
		return f, err
	}
	return openRootedFolder(dir)
}

// errNoKernel: the kernel's confined lookup (openat2) isn't there; the
// os.Root way is taken.
var errNoKernel = errors.New("no openat2")

// locks are the folders' locks rfolder takes within this process, each a
// channel of one: the kernel's lock where there is one (kfolder) holds
// across processes too.
var locks sync.Map // string (a folder's name on the machine) → chan struct{}

// lockKey takes the lock of key within this process, waiting until it is
// had or ctx ends.
func lockKey(ctx context.Context, key string) (func(), error) {
	v, _ := locks.LoadOrStore(key, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readDir reads d's entries, at most max of them.
func readDir(d *os.File, max int) ([]fs.DirEntry, error) {
	var all []fs.DirEntry
	for len(all) < max {
		more, err := d.ReadDir(min(1024, max-len(all)))
		all = append(all, more...)
		if errors.Is(err, io.EOF) || (err == nil && len(more) == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}
