package memory

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store/router"
)

// errFullLook says a change is one the watcher's record doesn't say
// enough of (a folder made, removed or renamed among the files, an area
// of the home made or removed): every source is looked at again.
var errFullLook = errors.New("look at every source")

// look brings m.srcs, the sources as they are now, up to date before a
// search. With a watcher, only the names the kernel says changed since
// the last look are looked at again (a file edited, made, removed or
// renamed, a conversation written), and the conversations kept off the
// machine, which no folder here shows; without one, or when its record
// is lost (the kernel's queue overflowed, a folder couldn't be watched),
// or once FullLookEvery has passed since the last, every source is.
func (m *Memory) look(ctx context.Context) error {
	m.startWatcher(ctx)
	full := m.srcs == nil || m.w == nil || m.w.wrong != nil || m.now().Sub(m.lastFull) >= m.cfg.FullLookEvery
	if !full {
		changes, lost := m.w.drain()
		if lost {
			full = true
		} else if err := m.apply(ctx, changes); errors.Is(err, errFullLook) {
			full = true
		} else if err != nil {
			return err
		}
	}
	if full {
		return m.fullLook(ctx)
	}
	return nil
}

// startWatcher starts the watcher once the home is there; one the
// system can't give is said once and never asked for again.
func (m *Memory) startWatcher(ctx context.Context) {
	if m.w != nil || m.noWatch {
		return
	}
	w, err := newWatcher(m.paths.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return // no home yet: every source (none) is looked at until there is
	}
	if err != nil {
		m.noWatch = true
		m.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "search looks at every source before each search", slog.String("agent", m.paths.Agent), slog.String("why", err.Error()))
		return
	}
	m.w = w
}

// fullLook looks at every source, watching each folder before it is
// read, so what changes after is in the watcher's record.
func (m *Memory) fullLook(ctx context.Context) error {
	if m.w != nil {
		m.w.begin()
		m.w.drain() // what happened before this look, which sees it
	}
	m.offMachine = map[string]bool{}
	m.large = map[string]int64{}
	m.fullLooks++
	srcs, skipped, err := m.scan(ctx)
	if m.w != nil {
		m.w.end()
		if m.w.wrong != nil && !m.loggedWrong {
			m.loggedWrong = true
			m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "a folder can't be watched: search looks at every source before each search (raise fs.inotify.max_user_watches)", slog.String("agent", m.paths.Agent), slog.String("err", m.w.wrong.Error()))
		}
	}
	if err != nil {
		m.srcs = nil
		return err
	}
	m.srcs, m.skipped, m.lastFull = srcs, skipped, m.now()
	m.syncAll = true
	return nil
}

// apply looks again at what the watcher says changed, and at the
// conversations kept off the machine. A change it can't follow name by
// name is errFullLook.
func (m *Memory) apply(ctx context.Context, changes []change) error {
	notes, files, threads, err := m.touched(changes)
	if err != nil {
		return err
	}
	if notes {
		s, ok, err := m.notesSource()
		if err != nil {
			return err
		}
		m.set(NotesName, s, ok, "")
	}
	for name := range files {
		m.lookFile(name)
	}
	return m.lookChats(ctx, threads)
}

// touched is what changes touched of the sources: the notes, files of
// the files folder by their names, and conversations by their threads
// (with those off the machine, looked at again each time); errFullLook
// when a change can only be taken by a full look.
func (m *Memory) touched(changes []change) (notes bool, files, threads map[string]bool, _ error) {
	files = map[string]bool{}
	threads = map[string]bool{}
	for th := range m.offMachine {
		threads[th] = true
	}
	for _, c := range changes {
		switch {
		case c.dir == "":
			if c.self {
				return false, nil, nil, errFullLook
			}
			switch c.name {
			case AreaFiles, AreaSkills, AreaChats, "memory":
				return false, nil, nil, errFullLook
			}
		case c.dir == "memory":
			notes = notes || c.name == "notes.md"
		case c.dir == AreaChats:
			switch {
			case c.self:
				return false, nil, nil, errFullLook
			default:
				if th, ok := folderThread(c.name); ok {
					threads[th] = true
				}
			}
		case strings.HasPrefix(c.dir, AreaChats+"/"):
			if th, ok := folderThread(path.Base(c.dir)); ok {
				threads[th] = true
			}
		case inFiles(c.dir):
			switch {
			case c.self:
				return false, nil, nil, errFullLook
			case c.isDir && !strings.HasPrefix(c.name, "."):
				return false, nil, nil, errFullLook
			case !c.isDir:
				files[c.dir+"/"+c.name] = true
			}
		}
	}
	return notes, files, threads, nil
}

// lookFile sets the file source name as it is now: gone, too large, or
// a regular file of its stamp.
func (m *Memory) lookFile(name string) {
	info, err := os.Lstat(filepath.Join(m.paths.Root, filepath.FromSlash(name)))
	ok := err == nil && info.Mode().IsRegular() && info.Size() <= maxFile
	delete(m.large, name)
	if err == nil && info.Mode().IsRegular() && info.Size() > maxFile {
		m.large[name] = info.Size()
	}
	var s Source
	if ok {
		s = Source{Name: name, Kind: KindFile, File: name, Stamp: stamp(info)}
	}
	why := ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		why = err.Error()
	}
	m.set(name, s, ok, why)
}

// lookChats sets each conversation of threads as it is now, reading the
// chats folder once.
func (m *Memory) lookChats(ctx context.Context, threads map[string]bool) error {
	if len(threads) == 0 {
		return nil
	}
	chats, err := router.OpenChats(m.paths)
	if chats == nil && err == nil || errors.Is(err, router.ErrChatsSymlink) {
		return errFullLook // the chats folder gone (its own removal says so too), or a link now
	}
	if err != nil {
		return err
	}
	defer chats.Close()
	for th := range threads {
		delete(m.offMachine, th)
		s, ok, err := m.chatSource(ctx, chats, th)
		why := ""
		if err != nil {
			ok, why = false, err.Error()
		}
		m.set(AreaChats+"/"+th, s, ok, why)
	}
	return ctx.Err()
}

// set keeps what a look found of the source name: s when ok, none when
// not, and why it couldn't be read when it couldn't (its index then
// kept as it was).
func (m *Memory) set(name string, s Source, ok bool, why string) {
	if m.unsynced == nil {
		m.unsynced = map[string]bool{}
	}
	m.unsynced[name] = true
	delete(m.skipped, name)
	switch {
	case ok:
		m.srcs[name] = s
	case why != "":
		delete(m.srcs, name)
		m.skipped[name] = why
	default:
		delete(m.srcs, name)
	}
}

// inFiles says whether the folder dir (relative to the home) is of
// files/ or skills/.
func inFiles(dir string) bool {
	for _, a := range []string{AreaFiles, AreaSkills} {
		if dir == a || strings.HasPrefix(dir, a+"/") {
			return true
		}
	}
	return false
}

// folderThread is the thread whose conversation's folder is named name,
// as router.Threads reads it.
func folderThread(name string) (string, bool) {
	th, err := contract.FolderThread(name)
	if err != nil {
		return "", false
	}
	if f, err := contract.ThreadFolder(th); err != nil || filepath.Base(f) != name {
		return "", false
	}
	return th, true
}
