package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/internal/fsx"
)

// The drivers Link Harness has itself, which keep a conversation's events
// in its own folder.
const (
	Log     = "log"     // events.jsonl
	Compact = "compact" // zstd frames in events.zst, the tail in events.jsonl
)

// MarkerPrefix starts the name of the empty file that says a driver keeps
// a conversation: store.sqlite, store.gcs.
const MarkerPrefix = "store."

// readFolder lists a conversation's folder: nil for one that doesn't
// exist, refused when it is a symbolic link (fsx.ErrLink), so no
// conversation's files are read or written where a link points.
func readFolder(dir string) ([]os.DirEntry, error) {
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, fsx.ErrLink) {
		return nil, fmt.Errorf("detect %s: the conversation's folder is a symbolic link: refused: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("detect %s: %w", dir, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("detect %s: %w", dir, err)
	}
	if entries == nil {
		entries = []os.DirEntry{}
	}
	return entries, nil
}

// Mark writes the marker that says driver keeps the conversation in dir,
// creating the folder; the log and compact need none. A folder or a
// marker that is a symbolic link is refused (fsx.ErrLink), and nothing is
// written where it points.
func Mark(dir, driver string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	d.Close()
	if driver == Log || driver == Compact {
		return nil
	}
	f, err := fsx.Open(filepath.Join(dir, MarkerPrefix+driver), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	return f.Close()
}
