package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// Errors of an agent's files, tested with errors.Is.
var (
	// ErrSymlink: a file of an agent's is never read through a symbolic
	// link. It is fsx's, so one test finds it whichever layer refused.
	ErrSymlink = fsx.ErrSymlink
	// ErrNotRegular: a file of an agent's that is a named pipe, a socket
	// or a device is never read: its reads could wait for good.
	ErrNotRegular = fsx.ErrNotRegular
	// ErrTooLarge: the file is longer than its reader's most.
	ErrTooLarge = errors.New("is over its most")
	// ErrBadName: the name isn't a plain path inside the agent's home.
	ErrBadName = errors.New("is not a path inside the agent's home")
)

// Files reads an agent's own files: its instructions, notes, skills and
// files folder, each named by a slash-separated path under its home
// (instructions/persona.md). It is the seam the prompt is read through,
// keyed by agent as the conversations are, so an agent whose files live
// elsewhere reads the same. A missing file is fs.ErrNotExist; a name that
// leaves the home is ErrBadName; a symbolic link on the way is ErrSymlink.
type Files interface {
	// ReadFile reads the file name of agent's, at most max bytes: a
	// longer one gives its first max bytes and ErrTooLarge.
	ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error)
	// Stat says what name is, without following a link.
	Stat(ctx context.Context, agent, name string) (FileInfo, error)
	// ReadDir lists the folder name of agent's, sorted by name, its first
	// max entries at most; links are listed as such, never followed.
	ReadDir(ctx context.Context, agent, name string, max int) ([]DirEntry, error)
}

// DirEntry is one entry of a folder Files lists.
type DirEntry struct {
	Name    string
	Dir     bool
	Symlink bool
}

// FileInfo is what Files says of one file or folder.
type FileInfo struct {
	Name    string // its last element
	Size    int64
	ModTime time.Time
	Dir     bool
	Symlink bool
}

// CheckFileName checks that name is a plain slash-separated path inside
// an agent's home: relative, clean, no "..", no backslash or NUL. One
// that passes never leaves the folder it is read from.
func CheckFileName(name string) error {
	bad := name == "" || name == "." || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") ||
		path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../")
	if bad {
		return fmt.Errorf("%q %w", name, ErrBadName)
	}
	return nil
}
