package log

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lnk-dev/link/internal/fsx"
)

// A folder made ahead: the next conversation the driver begins takes, by
// one rename, a folder made before it was needed with its files in it,
// rather than making the folder, events.jsonl, lease.json and chat.md
// while its first message waits. Each of those is a change of the file
// system's names, and under other processes' syncs each waits on the
// file system's journal, about a millisecond apiece on ext4 (the cold
// message of lnk measure; docs/decisions.md).

// SpareFolder is the name of the folder made ahead in the conversations
// folder; it is made as SpareFolder+"-new" before it is put there. Both
// name no thread (contract.FolderThread refuses them), so every reader of
// the conversations folder (the sweep, delivery, memory, convert, lnk
// agent status) passes them over.
const SpareFolder = ".spare"

// ahead is what the driver keeps of the folder made ahead: whether it
// makes one, its files, and the one being made.
type ahead struct {
	files []string // empty files it holds besides the log's own

	want atomic.Bool // one is to be made at the next Release

	mu     sync.Mutex
	making bool
	closed bool // by Close, or where this file system can't rename so
	wg     sync.WaitGroup
}

// MakeAhead has d keep a folder made ahead for the next conversation it
// begins, holding events.jsonl, lease.json and each of files (the copy
// for people, chat.md, which its first answer adds to), all empty. It is
// made in the background once d has begun a conversation, and again
// each time one is taken, when a lease is next let go (Release, at a
// turn's end): made as soon as one was taken, its changes went to the
// file system while the turn that took it waited for its first event's
// sync, which then took twice as long under load. Where a rename can't
// refuse to replace (off Linux) nothing is made ahead. Call it before
// d's first use; Close waits for a folder being made. It returns d.
func (d *Driver) MakeAhead(files ...string) *Driver {
	for _, f := range files {
		if f == "" || strings.ContainsAny(f, `/\`) || f == EventsFile || f == LeaseFile || f[0] == '.' {
			panic("log: MakeAhead: " + f + " is no file of a conversation's folder")
		}
	}
	if renameNoReplace != nil {
		d.ahead = &ahead{files: files}
	}
	return d
}

// Close waits for a folder being made ahead; nothing is made after it.
func (d *Driver) Close() error {
	if d.ahead == nil {
		return nil
	}
	d.ahead.mu.Lock()
	d.ahead.closed = true
	d.ahead.mu.Unlock()
	d.ahead.wg.Wait()
	return nil
}

// makeFolder makes dir, the folder of a conversation not begun, unless
// it is there: it takes the folder made ahead, when there is one, else
// makes dir; either way the next is made when a lease is next let go.
func (d *Driver) makeFolder(dir string) error {
	if d.ahead == nil {
		return os.MkdirAll(dir, 0o700)
	}
	spare := filepath.Join(d.chats, SpareFolder)
	switch takeSpare(spare, dir) {
	case spareTaken:
	case spareInPlace:
		return nil // another made dir meanwhile: the folder made ahead stays
	default:
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	d.ahead.want.Store(true)
	return nil
}

// madeFolders has the next folder made ahead if a conversation begun
// since the last took one or made its own.
func (d *Driver) madeFolders() {
	if d.ahead != nil && d.ahead.want.Load() && d.ahead.want.Swap(false) {
		d.ahead.refill(d.chats)
	}
}

// What takeSpare did.
const (
	spareNone    = iota // none to take, or it couldn't be: make the folder
	spareTaken          // the folder made ahead is dir now
	spareInPlace        // dir was there already
)

// takeSpare renames the folder made ahead, spare, to dir, only if dir
// isn't there and spare is a folder, not a link.
func takeSpare(spare, dir string) int {
	if info, err := os.Lstat(spare); err != nil || !info.IsDir() {
		return spareNone
	}
	switch err := renameNoReplace(spare, dir); {
	case err == nil:
		return spareTaken
	case os.IsExist(err):
		return spareInPlace
	default:
		return spareNone
	}
}

// refill makes the next folder ahead in the background, unless one is
// being made or d is closed.
func (a *ahead) refill(chats string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.making || a.closed {
		return
	}
	a.making = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// A folder not made (a full disk, a folder gone) is made when it's
		// needed, as without one.
		err := makeSpare(chats, a.files)
		a.mu.Lock()
		a.making = false
		a.closed = a.closed || unsupported(err)
		a.mu.Unlock()
	}()
}

// makeSpare makes a folder ahead in chats, unless one is there: under
// another name (SpareFolder+"-new"), its files made, then renamed to
// SpareFolder if nothing is there. Every
// step is one a process killed in the middle of, or another process
// making one at once, leaves right: a folder is made if not there, each
// file only if not there (O_EXCL) and empty, nothing ever written over or
// cut, so a folder taken, whole or not, is a conversation not begun, whose
// missing files its first lease and events make. The next one made
// carries on one a kill cut short. Nothing is synced here: the first
// event of the conversation that takes it syncs its folder and the
// conversations folder (syncNew), and a sync here would ask the file
// system for a commit of its own just as that first event asks for one.
func makeSpare(chats string, files []string) error {
	spare := filepath.Join(chats, SpareFolder)
	if _, err := os.Lstat(spare); err == nil {
		return nil
	}
	tmp := spare + "-new"
	if err := os.Mkdir(tmp, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, name := range append([]string{EventsFile, LeaseFile}, files...) {
		f, err := fsx.Open(filepath.Join(tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := renameNoReplace(tmp, spare); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
