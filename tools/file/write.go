package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Written is what a write did.
type Written struct {
	Path  string
	Bytes int
	Lines int
	New   bool // the file wasn't there before
}

// Write writes content as the whole of the file p, made with the folders
// leading to it when missing: atomically (a temporary file beside it,
// synced, renamed over it, the folder synced), so a reader or a kill
// finds the old file or the new, never part of it. An existing file keeps
// its permissions; a symbolic link, a folder or a named pipe at p is
// refused, never written through.
func (w *Workspace) Write(ctx context.Context, p string, content []byte) (Written, error) {
	if len(content) > MaxContent {
		return Written{}, refuse("file__write writes at most %d MiB; this content is %d bytes", MaxContent>>20, len(content))
	}
	name, err := CheckPath(p)
	if err != nil {
		return Written{}, err
	}
	existed := false
	err = w.edit(ctx, name, true, func(_ []byte, had bool) ([]byte, error) {
		existed = had
		return content, nil
	})
	if err != nil {
		return Written{}, err
	}
	return Written{Path: name, Bytes: len(content), Lines: countLines(content), New: !existed}, nil
}

// Replaced is what a replace did: where the new text begins (its line),
// the lines of the old text and of the new, and the lines around the
// change as the file is now.
type Replaced struct {
	Path       string
	Line       int
	OldLines   int
	NewLines   int
	Around     []string
	AroundFrom int
}

// Replace replaces the text old, which must occur exactly once in the
// file p, with new, writing the file as Write does. Two replaces of one
// file at once each see the other's change (the folder's lock is held
// from the read to the rename), so both are kept, or one is refused when
// the other took its old text away.
func (w *Workspace) Replace(ctx context.Context, p, old, new string) (Replaced, error) {
	switch {
	case old == "":
		return Replaced{}, refuse("old is the exact text to replace; it can't be empty (file__write writes a whole file)")
	case old == new:
		return Replaced{}, refuse("old and new are the same text: nothing to replace")
	case len(old) > MaxContent || len(new) > MaxContent:
		return Replaced{}, refuse("old and new are at most %d MiB each", MaxContent>>20)
	}
	name, err := CheckPath(p)
	if err != nil {
		return Replaced{}, err
	}
	var out Replaced
	err = w.edit(ctx, name, false, func(b []byte, had bool) ([]byte, error) {
		if !had {
			return nil, refuse("%s: there is no such file (file__write makes one)", name)
		}
		s := string(b)
		if looksBinary(b, true) {
			return nil, refuse("%s: a binary file, not UTF-8 text: not edited", name)
		}
		switch c := strings.Count(s, old); {
		case c == 0:
			return nil, refuse("%s: the old text occurs 0 times; it must occur exactly once, byte for byte (spaces, tabs and line ends too)%s", name, hint(s, old))
		case c > 1:
			return nil, refuse("%s: the old text occurs %d times; it must occur exactly once: give more of the text around it, so it names one place", name, c)
		}
		i := strings.Index(s, old)
		ns := s[:i] + new + s[i+len(old):]
		if len(ns) > MaxContent {
			return nil, refuse("%s: the file would be %d bytes; file__replace keeps a file within %d MiB", name, len(ns), MaxContent>>20)
		}
		out = Replaced{Path: name, Line: 1 + strings.Count(s[:i], "\n"), OldLines: countLines([]byte(old)), NewLines: countLines([]byte(new))}
		out.AroundFrom, out.Around = around(ns, out.Line, out.NewLines)
		return []byte(ns), nil
	})
	if err != nil {
		return Replaced{}, err
	}
	return out, nil
}

// hint says why an old text may not be found: line ends that differ.
func hint(s, old string) string {
	if strings.Contains(s, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		return ` (the file's lines end in "\r\n")`
	}
	return ""
}

// around is the lines of s about a change at line from, n lines long:
// two before and after, at most 20 lines and 4 KiB in all.
func around(s string, from, n int) (int, []string) {
	first := max(1, from-2)
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var out []string
	size := 0
	for i := first; i <= from+max(n, 1)+1 && i <= len(lines) && len(out) < 20; i++ {
		l := clip(strings.TrimSuffix(lines[i-1], "\r"), 500)
		if size += len(l); size > 4<<10 {
			break
		}
		out = append(out, l)
	}
	return first, out
}

// countLines counts b's lines, a last one without its newline too.
func countLines(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// midWrite, when a test sets it, runs halfway through a file's write,
// before the rest of it is written: a test kills the process there.
var midWrite func()

// edit writes name whole with what change makes of its content (nil and
// had false when it isn't there), under its folder's lock, made with the
// folders leading to it when mk, in the call's sandbox. The content is
// read only when the file is there and change is to see it.
func (w *Workspace) edit(ctx context.Context, name string, mk bool, change func(old []byte, had bool) ([]byte, error)) error {
	return w.box.run(func() error { return w.editIn(ctx, name, mk, change) })
}

func (w *Workspace) editIn(ctx context.Context, name string, mk bool, change func(old []byte, had bool) ([]byte, error)) error {
	dirName, base := path.Split(name)
	switch {
	case base == "..":
		return describe(name, errOutside)
	case name == ".":
		return refuse("%s: a folder, not a file", name)
	}
	dirName = path.Clean(dirName)
	root, err := openRoot(w.dir)
	if err != nil {
		return err
	}
	defer root.close()
	dir := root
	if dirName != "." {
		if dir, err = root.openFolder(dirName, mk); err != nil {
			return describe(dirName, err)
		}
		defer dir.close()
	}
	unlock, err := dir.lock(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, cause(err))
	}
	defer unlock()

	fi, err := dir.lstat(base)
	had := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return describe(name, err)
	case had && fi.Mode()&fs.ModeSymlink != 0:
		return refuse("%s: a symbolic link: it is not written through; write the file it points to", name)
	case had && fi.IsDir():
		return refuse("%s: a folder, not a file", name)
	case had && !fi.Mode().IsRegular():
		return describe(name, errNotRegular)
	}
	var old []byte
	if had && !mk {
		var cut bool
		old, cut, err = dir.readFile(base, MaxContent, nil)
		if err != nil {
			return describe(name, err)
		}
		if cut {
			return refuse("%s: over %d MiB: file__replace edits files within it", name, MaxContent>>20)
		}
	}
	content, err := change(old, had)
	if err != nil {
		return err
	}
	var perm fs.FileMode
	if had {
		perm = fi.Mode().Perm()
	}
	return replaceFile(dir, name, base, content, had, perm)
}

// replaceFile writes content as dir's file base (name, the workspace's
// path) in one rename over it: written to a temporary file, synced and
// its folder synced after, with perm, the file's mode, when it had one.
func replaceFile(dir folder, name, base string, content []byte, had bool, perm fs.FileMode) error {
	tmp := tempName(base)
	dir.remove(tmp) // one a killed write left
	f, err := dir.create(tmp)
	if err != nil {
		return describe(name, err)
	}
	err = writeHalves(f, content)
	if err == nil && had {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.rename(tmp, base)
	}
	if err != nil {
		dir.remove(tmp)
		return describe(name, err)
	}
	if err := dir.sync(); err != nil {
		return describe(name, err)
	}
	return nil
}

// writeHalves writes b to f, its first half and then the rest (midWrite
// between, when a test set it).
func writeHalves(f *os.File, b []byte) error {
	half := len(b) / 2
	if _, err := f.Write(b[:half]); err != nil {
		return err
	}
	if midWrite != nil {
		midWrite()
	}
	_, err := f.Write(b[half:])
	return err
}

// tempName is the temporary file a write of name is made in beside it:
// one name for each file, since every write in a folder holds its lock,
// so one a killed write left behind is taken away by the next.
func tempName(name string) string {
	return "." + clip(name, 200) + ".lnk-write"
}
