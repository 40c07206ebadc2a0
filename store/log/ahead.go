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
// while its first message waits. Each of those makes an inode: where
// ext4 keeps no journal, it looks past every inode freed in the last
// seconds for one to take, up to 0.8 ms of processor apiece where many
// files come and go (the cold message of lnk measure;
// docs/decisions/022-perf-cold-message-syncs.md); with a journal, each
// waits on it under other processes' syncs.

// AheadFolder is the name of the folder made ahead in the conversations
// folder; it is made as AheadFolder+"-new" before it is put there. Both
// name no thread (contract.FolderThread refuses them), so every reader of
// the conversations folder (the sweep, delivery, memory, convert, lnk
// agent status) passes them over.
const AheadFolder = ".ahead"

// ahead is what the driver keeps of the folder made ahead: whether it
// makes one, its files, and the one being made.
type ahead struct {
	files []string // empty files it holds besides the log's own

	want atomic.Bool // one is to be made at the next Release

	spread sync.Once // the conversations folder marked (spreadFolders)

	mu     sync.Mutex
	making bool
	closed bool // by Close, or where this file system can't rename so
	wg     sync.WaitGroup
	// made is the folder made ahead by this driver, its names synced,
	// until a conversation takes it; taken is the one last taken, until
	// its first event (namesSynced).
	made, taken *synced
}

// synced is a folder made ahead by this driver, its names being synced
// or synced: the folder as it was made, its events.jsonl held open, so no
// other file can have its identity while this is kept, and, once taken,
// the conversation's folder it became; done is closed once the sync of
// its names ended, err what it returned.
type synced struct {
	dir        string
	folder     os.FileInfo
	events     *os.File
	eventsInfo os.FileInfo

	names *os.File // the folder, open for its sync
	done  chan struct{}
	err   error
}

// close lets s's events.jsonl go; nil is none.
func (s *synced) close() {
	if s != nil {
		s.events.Close()
	}
}

// sync syncs s's names, through the folder it opened whatever it is
// named now, and says it ended.
func (s *synced) sync() {
	s.err = syncFolder(s.names)
	s.names.Close()
	close(s.done)
}

// wait waits for s's names to be synced; where that failed, dir's names
// are synced again.
func (s *synced) wait() error {
	<-s.done
	if s.err != nil {
		return syncDir(s.dir)
	}
	return nil
}

// MakeAhead has d keep a folder made ahead for the next conversation it
// begins, holding events.jsonl, lease.json and each of files (the copy
// for people, chat.md, which its first answer adds to), all empty. It is
// made in the background once d has begun a conversation, and again
// each time one is taken, when a lease is next let go (Release, at a
// turn's end): made as soon as one was taken, its changes went to the
// file system while the turn that took it waited for its first event's
// sync, which then took twice as long under load. Before the first, the
// conversations folder is marked as holding unrelated folders
// (spreadFolders), so the file system may put each in a block group of
// its own choosing. Where a rename can't refuse to replace (off Linux)
// nothing is made ahead. Call it before d's first use; Close waits for a
// folder being made. It returns d.
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
	a := d.ahead
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
	a.mu.Lock()
	a.made.close()
	a.taken.close()
	a.made, a.taken = nil, nil
	a.mu.Unlock()
	return nil
}

// makeFolder makes dir, the folder of a conversation not begun, unless
// it is there: it takes the folder made ahead, when there is one, else
// makes dir; either way the next is made when a lease is next let go.
func (d *Driver) makeFolder(dir string) error {
	if d.ahead == nil {
		return os.MkdirAll(dir, 0o700)
	}
	ahead := filepath.Join(d.chats, AheadFolder)
	switch takeAhead(ahead, dir) {
	case aheadTaken:
		d.ahead.took(dir)
	case aheadInPlace:
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

// took notes that dir is the folder made ahead, just taken: when it is
// the one this driver made and synced, its first event need not sync its
// names again (namesSynced).
func (a *ahead) took(dir string) {
	info, err := os.Lstat(dir)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.made == nil {
		return
	}
	if err != nil || !os.SameFile(info, a.made.folder) {
		// Another process took the one this driver made.
		a.made.close()
		a.made = nil
		return
	}
	a.taken.close()
	a.taken, a.made = a.made, nil
	a.taken.dir = dir
}

// namesSynced is how the first event of dir's conversation, written in
// events, waits for dir's names to be on the disk, when dir is the folder
// made ahead this driver made and just took (took), its events.jsonl the
// one made in it, both still there: their sync began as it was made;
// else nil, and dir is synced as a folder made then. It is asked once a
// folder taken.
func (a *ahead) namesSynced(dir string, events *fsx.File) func() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	t := a.taken
	if t == nil || t.dir != dir {
		a.mu.Unlock()
		return nil
	}
	a.taken = nil
	a.mu.Unlock()
	defer t.close()
	if same, err := events.SameFile(t.eventsInfo); err != nil || !same {
		return nil
	}
	if info, err := os.Lstat(dir); err != nil || !os.SameFile(info, t.folder) {
		return nil
	}
	return t.wait
}

// What takeAhead did.
const (
	aheadNone    = iota // none to take, or it couldn't be: make the folder
	aheadTaken          // the folder made ahead is dir now
	aheadInPlace        // dir was there already
)

// takeAhead renames the folder made ahead, ahead, to dir, only if dir
// isn't there and ahead is a folder, not a link.
func takeAhead(ahead, dir string) int {
	if info, err := os.Lstat(ahead); err != nil || !info.IsDir() {
		return aheadNone
	}
	switch err := renameNoReplace(ahead, dir); {
	case err == nil:
		return aheadTaken
	case os.IsExist(err):
		return aheadInPlace
	default:
		return aheadNone
	}
}

// refill makes the next folder ahead in the background, unless one is
// being made or d is closed; its names are synced once it is in place,
// while another may be made.
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
		a.spread.Do(func() { spreadFolders(chats) })
		// A folder not made (a full disk, a folder gone) is made when it's
		// needed, as without one.
		made, err := makeAheadIn(chats, a.files)
		a.mu.Lock()
		if made != nil {
			a.made.close()
			a.made = made
		}
		a.making = false
		a.closed = a.closed || unsupported(err)
		a.mu.Unlock()
		if made != nil {
			made.sync()
		}
	}()
}

// makeAheadIn makes a folder ahead in chats, unless one is there: under
// another name (AheadFolder+"-new"), its files made, then renamed to
// AheadFolder if nothing is there; it returns the one it put there, whose
// names are still to be synced (synced.sync). Every step is one a process
// killed in the middle of, or another process making one at once, leaves
// right: a folder is made if not there, each file only if not there
// (O_EXCL) and empty, nothing ever written over or cut, so a folder
// taken, whole or not, is a conversation not begun, whose missing files
// its first lease and events make. The next one made carries on one a
// kill cut short. Its names are synced off any message's path, so the
// first event of the conversation that takes it syncs only the
// conversations folder (the rename that put it in place) beside the
// event, waiting for that sync if it hasn't ended (syncNew); the rename
// to AheadFolder isn't synced: that sync covers it.
func makeAheadIn(chats string, files []string) (*synced, error) {
	ahead := filepath.Join(chats, AheadFolder)
	if _, err := os.Lstat(ahead); err == nil {
		return nil, nil
	}
	tmp := ahead + "-new"
	if err := os.Mkdir(tmp, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	for _, name := range append([]string{EventsFile, LeaseFile}, files...) {
		f, err := fsx.Open(filepath.Join(tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	names, err := fsx.Open(tmp, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	made := &synced{names: names, done: make(chan struct{})}
	if made.folder, err = names.Stat(); err == nil && !made.folder.IsDir() {
		err = errors.New("not a folder")
	}
	if err == nil {
		made.events, err = fsx.Open(filepath.Join(tmp, EventsFile), os.O_RDONLY, 0)
	}
	if err == nil {
		if made.eventsInfo, err = made.events.Stat(); err == nil && !made.eventsInfo.Mode().IsRegular() {
			err = errors.New(EventsFile + " is not a file")
		}
	}
	if err == nil {
		if err = renameNoReplace(tmp, ahead); errors.Is(err, fs.ErrExist) {
			names.Close()
			made.close()
			return nil, nil
		}
	}
	if err != nil {
		names.Close()
		if made.events != nil {
			made.close()
		}
		return nil, err
	}
	return made, nil
}

// syncFolder makes the names of an open folder durable (fsx.Fsync; a test's to
// watch).
var syncFolder = fsx.Fsync
