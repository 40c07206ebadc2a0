package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lnk-dev/link/internal/fsx"
)

// The names of the drivers Link Harness has itself, which keep a
// conversation's events in files of its own folder (store/log,
// store/compact). Each declares those files with RegisterFolderKind.
const (
	Log     = "log"
	Compact = "compact"
)

// FolderKind is what a driver that keeps a conversation's events in files
// of the conversation's own folder declares of those files, so that the
// folder says which driver keeps it (KindOf). store/log and store/compact
// register theirs when their package is loaded, as image formats and
// database/sql drivers register themselves.
type FolderKind struct {
	// Name is the driver's name: Log, Compact.
	Name string
	// Events are the names of the folder's files that hold the events.
	// Every event the driver appends changes the size or modification
	// time of one of them, so a conversation whose files are as they
	// were has no new event (the harness's sweep passes over it).
	Events []string
	// Sign is the one of Events whose presence says the driver keeps the
	// conversation: once it holds an event, or as soon as it is there
	// when EmptySign is set.
	Sign      string
	EmptySign bool
}

// maxFolderKinds bounds how many drivers register a folder kind: KindOf
// notes the signs it found in one word.
const maxFolderKinds = 64

var (
	folderKindsMu sync.Mutex
	folderKinds   atomic.Pointer[[]FolderKind]
)

// RegisterFolderKind declares the files a driver keeps in a
// conversation's folder, for KindOf and LookupFolderKind. It panics on a
// declaration that isn't whole (no name, no events, a sign not among
// them) or a name already registered, as a program's setup error.
func RegisterFolderKind(k FolderKind) {
	if ParseKind(k.Name) != nil || len(k.Events) == 0 || !slices.Contains(k.Events, k.Sign) {
		panic(fmt.Sprintf("store: folder kind %q: a name, its events' files and a sign among them", k.Name))
	}
	k.Events = slices.Clone(k.Events)
	folderKindsMu.Lock()
	defer folderKindsMu.Unlock()
	var all []FolderKind
	if p := folderKinds.Load(); p != nil {
		all = slices.Clone(*p)
	}
	if len(all) == maxFolderKinds {
		panic("store: more than 64 folder kinds")
	}
	for _, o := range all {
		if o.Name == k.Name {
			panic("store: folder kind " + k.Name + " registered twice")
		}
	}
	all = append(all, k)
	folderKinds.Store(&all)
}

// LookupFolderKind gives what the driver name registered of its files in
// a conversation's folder; false for a driver that registered none (a
// store driver, whose events are elsewhere).
func LookupFolderKind(name string) (FolderKind, bool) {
	for _, k := range registeredKinds() {
		if k.Name == name {
			return k, true
		}
	}
	return FolderKind{}, false
}

func registeredKinds() []FolderKind {
	if p := folderKinds.Load(); p != nil {
		return *p
	}
	return nil
}

// KindOf says which driver keeps the conversation in dir: the driver an
// empty store.<driver> names, else the registered folder kind whose sign
// is there (FolderKind). Where the signs of several are, it is the kind
// whose event files hold the others' signs (compact's tail is named as
// the log's file). A folder that doesn't exist, or holds only what isn't
// an event (its tools, a lease taken before the first event), is a
// conversation not begun: "". One that keeps its events a file each, the
// layout from before the log, is refused (ErrFilePerEvent).
func KindOf(dir string) (string, error) {
	kind, _, err := kindOfListed(dir)
	return kind, err
}

// kindOfListed is KindOf, and the signs found holding an event (those
// without EmptySign) that said it.
func kindOfListed(dir string) (string, []string, error) {
	entries, err := readFolder(dir)
	if entries == nil || err != nil {
		return "", nil, err
	}
	kinds := registeredKinds()
	var found, sized uint64
	perEvent := false
	for _, e := range entries {
		name := e.Name()
		if d, ok := strings.CutPrefix(name, MarkerPrefix); ok && d != "" {
			return d, nil, nil
		}
		if name == filePerEventDir {
			perEvent = true
		}
		for i, k := range kinds {
			if name != k.Sign {
				continue
			}
			if !k.EmptySign {
				if info, err := e.Info(); err != nil || info.Size() == 0 {
					continue
				}
				sized |= 1 << i
			}
			found |= 1 << i
		}
	}
	if perEvent {
		return "", nil, fmt.Errorf("detect %s: %w", dir, ErrFilePerEvent)
	}
	kind, err := pickKind(dir, kinds, found)
	if kind == "" || err != nil {
		return kind, nil, err
	}
	var signs []string
	for i, k := range kinds {
		if sized&(1<<i) != 0 {
			signs = append(signs, k.Sign)
		}
	}
	return kind, signs, nil
}

// pickKind is the kind of the folder dir among those whose signs were
// found: the one whose event files hold every other's sign.
func pickKind(dir string, kinds []FolderKind, found uint64) (string, error) {
	if found == 0 {
		return "", nil
	}
	for i, k := range kinds {
		if found&(1<<i) == 0 {
			continue
		}
		all := true
		for j, o := range kinds {
			if j != i && found&(1<<j) != 0 && !slices.Contains(k.Events, o.Sign) {
				all = false
				break
			}
		}
		if all {
			return k.Name, nil
		}
	}
	var names []string
	for i, k := range kinds {
		if found&(1<<i) != 0 {
			names = append(names, k.Name)
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
