package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lnk-dev/link/internal/fsx"
)

// MarkerPrefix starts the name of the empty file that says a driver keeps
// a conversation: store.sqlite, store.gcs.
const MarkerPrefix = "store."

// Of says which driver keeps the conversation in dir: the driver an
// empty store.<driver> names, else the registered driver whose sign is
// there (Driver.Sign). Where the signs of several are, it is the driver
// whose event files hold the others' signs (compact's tail is named as
// the log's file). A folder that doesn't exist, or holds only what isn't
// an event (its tools, a lease taken before the first event), is a
// conversation not begun: "". One that keeps its events a file each, the
// layout from before the log, is refused (ErrFilePerEvent).
func Of(dir string) (string, error) {
	entries, err := readFolder(dir)
	if entries == nil || err != nil {
		return "", err
	}
	all := registered()
	var found uint64
	perEvent := false
	for _, e := range entries {
		name := e.Name()
		if d, ok := strings.CutPrefix(name, MarkerPrefix); ok && d != "" {
			return d, nil
		}
		if name == filePerEventDir {
			perEvent = true
		}
		for i, d := range all {
			if !d.InFolder() || name != d.Sign {
				continue
			}
			if !d.EmptySign {
				if info, err := e.Info(); err != nil || info.Size() == 0 {
					continue
				}
			}
			found |= 1 << i
		}
	}
	if perEvent {
		return "", fmt.Errorf("detect %s: %w", dir, ErrFilePerEvent)
	}
	return pick(dir, all, found)
}

// pick is the driver of the folder dir among those whose signs were
// found: the one whose event files hold every other's sign.
func pick(dir string, all []Driver, found uint64) (string, error) {
	if found == 0 {
		return "", nil
	}
	for i, d := range all {
		if found&(1<<i) == 0 {
			continue
		}
		holds := true
		for j, o := range all {
			if j != i && found&(1<<j) != 0 && !slices.Contains(d.Events, o.Sign) {
				holds = false
				break
			}
		}
		if holds {
			return d.Name, nil
		}
	}
	var names []string
	for i, d := range all {
		if found&(1<<i) != 0 {
			names = append(names, d.Name)
		}
	}
	return "", fmt.Errorf("detect %s: the folder holds the events of %s at once", dir, strings.Join(names, " and "))
}

// filePerEventDir is the folder of the layout from before the log, a
// file per event: events/00000000000000000042.json holding event 42's
// line, as store/gcs still names its objects.
const filePerEventDir = "events"

// ErrFilePerEvent refuses a conversation's folder that keeps its events a
// file each (events/<seq>.json), the layout from before the log. No
// driver reads it, so it is refused rather than taken for a conversation
// not begun, whose first message would start it anew over the events
// there; nothing in the folder is written or removed.
var ErrFilePerEvent = errors.New("kept a file per event (events/<number>.json), a layout from before the log that no driver reads: refused, and nothing of it changed; to go on with it, put its events, each a line in order, in events.jsonl beside it and remove events/")

// readFolder lists a conversation's folder: nil for one that doesn't
// exist, refused when it is a symbolic link (fsx.ErrSymlink), so no
// conversation's files are read or written where a link points.
func readFolder(dir string) ([]os.DirEntry, error) {
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, fsx.ErrSymlink) {
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

// Mark writes the marker that says the driver name keeps the
// conversation in dir, creating the folder; a driver that keeps its
// events in the folder (InFolder) needs none. A folder or a marker that
// is a symbolic link is refused (fsx.ErrSymlink), and nothing is written
// where it points.
func Mark(dir, name string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	d.Close()
	if r, ok := Lookup(name); ok && r.InFolder() {
		return nil
	}
	f, err := fsx.Open(filepath.Join(dir, MarkerPrefix+name), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	return f.Close()
}
