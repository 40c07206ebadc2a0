package store

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// kindMemo remembers, for the router, the kind KindOf found for a begun
// conversation's folder, so a turn's lease looks at the folder with one
// lstat, and one more of each sign that must hold an event, instead of
// listing it. An answer is trusted while the folder's identity and times
// are as they were before it was listed: any file made, removed or
// renamed in the folder (a marker, compact's files, a convert's move)
// changes its times, another folder in its place has another identity,
// and a folder changed in the last FolderSettle (FolderSettleFine where its
// times are kept finer than a second) is listed again (a file system
// keeps times to a clock's tick). A sign that must hold an event
// (the log's events.jsonl) is looked at each time, as the listing does:
// a file's size changes no folder's times. Off Linux nothing is
// remembered. Safe for concurrent use.
type kindMemo struct {
	mu sync.Mutex
	m  map[string]kindSeen
}

// kindSeen is a folder's kind as it was found, the folder's stamp taken
// before it was listed, and the signs whose size said it.
type kindSeen struct {
	st    dirStamp
	kind  string
	sized []string
}

// FolderSettle is how long after its last change a folder's times are
// trusted to change with its next one (a file system keeps them to a
// clock's tick); FolderSettleFine where the folder's times show the file
// system keeps them finer than a second (to the kernel's clock tick, at
// most 10 ms): ten ticks of the coarsest. The router's kinds and
// store/home's misses both trust a folder so.
const (
	FolderSettle     = 2 * time.Second
	FolderSettleFine = 100 * time.Millisecond
)

// maxKindMemo bounds the folders remembered.
const maxKindMemo = 4096

// routerKinds is what the router and a pinned conversation remember.
var routerKinds kindMemo

// kindNow is the clock a folder's times are compared with (a test's to move).
var kindNow = time.Now

// kindOf is KindOf, answered from memory for a folder remembered and
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
		return "", nil // no folder: a conversation not begun, as KindOf says
	}
	kind, sized, err := kindOfListed(dir)
	if err != nil || kind == "" || stErr != nil || !st.known || !st.settled(kindNow()) {
		if ok {
			km.mu.Lock()
			delete(km.m, dir)
			km.mu.Unlock()
		}
		return kind, err
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

// still says the folder is as it was when seen was found, and each sign
// that must hold an event still does.
func (seen kindSeen) still(dir string) bool {
	if st, err := stampDir(dir); err != nil || st != seen.st {
		return false
	}
	for _, name := range seen.sized {
		if !regularNonEmpty(filepath.Join(dir, name)) {
			return false
		}
	}
	return true
}
