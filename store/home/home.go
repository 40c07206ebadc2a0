// Package home reads an agent's own files from its home folder on disk,
// the store's Files seam: confined to the home, never through a link,
// each read bounded. On Linux a file is opened with one openat2(2) that
// the kernel holds beneath the home and refuses links on the way
// (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS); elsewhere through an os.Root,
// each step of the way looked at first.
package home

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/lnk-dev/link/store"
)

// Files is the Files of every agent under one Link home.
type Files struct {
	// Home is the Link home: an agent's files are under store.For(Home,
	// agent).Root.
	Home string
}

var _ store.Files = Files{}

// root is agent's home folder.
func (f Files) root(agent string) (string, error) {
	p, err := store.For(f.Home, agent)
	if err != nil {
		return "", err
	}
	return p.Root, nil
}

// ReadFile reads name, at most max bytes (store.ErrTooLarge past it,
// with the first max bytes).
func (f Files) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file, err := f.open(agent, name, false)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	size := 512
	if fi, err := file.Stat(); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("read %s: is a folder", name)
		}
		if s := fi.Size(); s > 0 && s < int64(max) {
			size = int(s) + 1
		} else if s >= int64(max) {
			size = max + 1
		}
	}
	b := make([]byte, 0, size)
	for len(b) <= max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := file.Read(b[len(b):min(cap(b), max+1)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	return b[:max], fmt.Errorf("read %s: %w of %d bytes", name, store.ErrTooLarge, max)
}

// Stat says what name is, a link as a link.
func (f Files) Stat(ctx context.Context, agent, name string) (store.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return store.FileInfo{}, err
	}
	fi, err := f.lstat(agent, name)
	if err != nil {
		return store.FileInfo{}, err
	}
	return info(fi), nil
}

// ReadDir lists the folder name, sorted, its first max entries, each
// as the folder says what it is (no stat of each).
func (f Files) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := f.open(agent, name, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	// The whole folder is read, up to a bound: its order isn't sorted.
	var all []fs.DirEntry
	for len(all) < maxListed {
		more, err := d.ReadDir(256)
		all = append(all, more...)
		if errors.Is(err, io.EOF) || (err == nil && len(more) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", name, err)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name() < all[j].Name() })
	if len(all) > max {
		all = all[:max]
	}
	out := make([]store.DirEntry, len(all))
	for i, e := range all {
		out[i] = store.DirEntry{Name: e.Name(), Dir: e.IsDir(), Symlink: e.Type()&fs.ModeSymlink != 0}
	}
	return out, nil
}

// maxListed bounds the entries ReadDir reads of one folder before it
// sorts them.
const maxListed = 1 << 16

func info(fi fs.FileInfo) store.FileInfo {
	return store.FileInfo{
		Name:    fi.Name(),
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
		Dir:     fi.IsDir(),
		Symlink: fi.Mode()&fs.ModeSymlink != 0,
	}
}

// refused is the error of a link found on the way to name.
func refused(name string) error {
	return &fs.PathError{Op: "open", Path: name, Err: store.ErrSymlink}
}

// openRooted opens name through an os.Root of the home, each element of
// the way looked at first: a link anywhere is refused, and os.Root holds
// whatever changes meanwhile inside the home.
func openRooted(home, name string) (*os.File, error) {
	root, err := os.OpenRoot(home)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := noLinks(root, name); err != nil {
		return nil, err
	}
	return root.Open(name)
}

// lstatRooted is Lstat of name through an os.Root of the home, no link
// on the way.
func lstatRooted(home, name string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(home)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if dir := path.Dir(name); dir != "." {
		if err := noLinks(root, dir); err != nil {
			return nil, err
		}
	}
	return root.Lstat(name)
}

// noLinks refuses a link at any element of name.
func noLinks(root *os.Root, name string) error {
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		fi, err := root.Lstat(name[:i])
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return refused(name[:i])
		}
		if i == len(name) && !fi.Mode().IsRegular() && !fi.IsDir() {
			return &fs.PathError{Op: "open", Path: name, Err: store.ErrNotRegular}
		}
	}
	return nil
}
