// Package file is Link's file tool: read, write, replace and find over an
// agent's workspace (its files/ folder, store.Paths.Files), served to Link
// Harness over MCP as file__read, file__write, file__replace and
// file__find (server.go).
//
// Every path a call names is relative to the workspace and is resolved
// by the kernel beneath it: on Linux each open is one openat2(2) with
// RESOLVE_BENEATH and RESOLVE_NO_MAGICLINKS from the workspace's folder,
// so "..", an absolute name and a symbolic link out of the workspace are
// refused by the kernel's own lookup (EXDEV), while a link that stays
// inside it is followed; elsewhere through an os.Root, which holds the
// same. Each call runs on an OS thread of its own that Landlock holds to
// the workspace (sandbox_linux.go), so nothing else of the machine is
// reached even through a flaw of the lookup. A file is written whole: a temporary file beside it, synced, renamed
// over it, its folder synced, under the folder's lock, so a reader, a
// second writer or a kill never sees half of it. No answer names a path
// of the machine: every path said is the workspace's.
package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Bounds of a call's input.
const (
	// MaxPath is the most bytes of a path a call names.
	MaxPath = 4096
	// MaxContent is the most bytes file__write writes, and of
	// file__replace's old and new texts each; a file over it is not
	// edited by file__replace.
	MaxContent = 8 << 20
)

// Workspace is one agent's workspace, the folder its file calls work in,
// and the sandbox each call runs in.
type Workspace struct {
	dir string
	box *sandbox
}

// New is the workspace at dir (an agent's store.Paths.Files()), which
// must be an existing folder. Close lets its sandbox go.
func New(dir string) (*Workspace, error) {
	r, err := openRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the workspace: %w", err)
	}
	r.close()
	box, err := newSandbox(dir)
	if err != nil {
		return nil, err
	}
	return &Workspace{dir: dir, box: box}, nil
}

// Close lets the workspace's sandbox go; no call is made after.
func (w *Workspace) Close() { w.box.close() }

// Refusal is a call refused for breaking a rule, which its text names.
type Refusal struct{ Rule string }

func (r *Refusal) Error() string { return r.Rule }

func refuse(format string, args ...any) error {
	return &Refusal{Rule: fmt.Sprintf(format, args...)}
}

// IsRefusal says whether err is a call's refusal, a rule it broke.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}

// CheckPath checks a path a call named and gives it clean, relative to
// the workspace ("." for the workspace itself). It refuses an empty
// path, a NUL, one over MaxPath bytes and an absolute one; ".." is left
// to the kernel's lookup, which refuses a way out of the workspace.
func CheckPath(p string) (string, error) {
	switch {
	case p == "":
		return "", refuse("no path: name a file relative to the workspace, such as notes/todo.md")
	case len(p) > MaxPath:
		return "", refuse("a path is at most %d bytes; this one is %d", MaxPath, len(p))
	case strings.IndexByte(p, 0) >= 0:
		return "", refuse("a path holds no NUL byte")
	case path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return "", refuse("%q is an absolute path: paths are relative to the workspace, such as notes/todo.md", clip(p, 200))
	}
	return path.Clean(p), nil
}

// errOutside is the kernel's refusal of a way out of the workspace.
var errOutside = errors.New("outside the workspace")

// describe is err of a call on name as said to the model: the
// workspace's name and the cause, never a path of the machine.
func describe(name string, err error) error {
	if err == nil || IsRefusal(err) {
		return err
	}
	switch {
	case errors.Is(err, errOutside):
		return refuse("%s: outside the workspace (a \"..\" or a symbolic link that leads out of it); every path stays within it", name)
	case errors.Is(err, errLoop):
		return refuse("%s: symbolic links on the way lead to each other (or to a /proc link): not followed", name)
	case errors.Is(err, errLink):
		return refuse("%s: a symbolic link, not followed here", name)
	case errors.Is(err, errNotRegular):
		return refuse("%s: not a regular file (a named pipe, a socket or a device): never read or written", name)
	case errors.Is(err, fs.ErrNotExist):
		return refuse("%s: there is no such file", name)
	case errors.Is(err, syscall.ENOTDIR):
		return refuse("%s: a part of the path is a file, not a folder", name)
	case errors.Is(err, syscall.EISDIR):
		return refuse("%s: a folder, not a file (file__find lists what is in it)", name)
	case errors.Is(err, fs.ErrPermission):
		return refuse("%s: permission denied", name)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return refuse("%s: a name in the path is too long", name)
	}
	return fmt.Errorf("%s: %w", name, cause(err))
}

// cause is err without the paths an *fs.PathError or *os.LinkError wraps
// it in.
func cause(err error) error {
	for {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
			continue
		}
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
			continue
		}
		return err
	}
}

// clip is s cut to at most n bytes, on a rune's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
