package router

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/lnk-dev/link/store/driver"
)

// kindMemo remembers, for the router, the driver driver.Of found for a
// begun conversation's folder, so a turn's lease looks at the folder with
// one lstat, and one more of the driver's sign when it must hold an
// event, instead of listing it. An answer is trusted while the folder's
// identity and times are as they were before it was listed: any file
// made, removed or renamed in the folder (a marker, compact's files, a
// convert's move) changes its times, another folder in its place has
// another identity, and a folder changed in the last foldertime.Wait
// (foldertime.WaitFine where its times are kept finer than a second) is
// listed again (a file system keeps times to a clock's tick). A sign that
// must hold an event (the log's events.jsonl) is looked at each time, as
// the listing does: a file's size changes no folder's times. Off Linux
// nothing is remembered. Safe for concurrent use.
type kindMemo struct {
	mu sync.Mutex
	m  map[string]kindSeen
}

// kindSeen is a folder's driver as it was found, the folder's stamp taken
// before it was listed, and the sign whose size said it ("" for none).
type kindSeen struct {
	st    dirStamp
	kind  string
	sized string
}

// maxKindMemo bounds the folders remembered.
const maxKindMemo = 4096

// routerKinds is what the router and a pinned conversation remember.
var routerKinds kindMemo

// kindNow is the clock a folder's times are compared with (a test's to move).
var kindNow = time.Now

// kindOf is driver.Of, answered from memory for a folder remembered and
// unchanged.
func (km *kindMemo) kindOf(dir string) (string, error) {
	km.mu.Lock()
	seen, ok := km.m[dir]
	km.mu.Unlock()
	if ok && seen.still(dir) {
		return seen.kind, nil
	}
	st, stErr := stampDir(dir)
	if errors.Is(stErr, fs.ErrNotExist) {
		return "", nil // no folder: a conversation not begun, as driver.Of says
	}
	kind, err := driver.Of(dir)
	if err != nil || kind == "" || stErr != nil || !st.known || !st.trusted(kindNow()) {
		if ok {
			km.mu.Lock()
			delete(km.m, dir)
			km.mu.Unlock()
		}
		return kind, err
	}
	var sized string
	if d, ok := driver.Lookup(kind); ok && d.InFolder() && !d.EmptySign {
		sized = d.Sign
	}
	km.mu.Lock()
	defer km.mu.Unlock()
	if km.m == nil {
		km.m = map[string]kindSeen{}
	}
	if _, had := km.m[dir]; had || len(km.m) < maxKindMemo {
		km.m[dir] = kindSeen{st: st, kind: kind, sized: sized}
	}
	return kind, nil
}

// still says the folder is as it was when seen was found, and the sign
// that must hold an event still does.
func (seen kindSeen) still(dir string) bool {
	if st, err := stampDir(dir); err != nil || st != seen.st {
		return false
	}
	return seen.sized == "" || regularNonEmpty(filepath.Join(dir, seen.sized))
}
