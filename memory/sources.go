package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/transcript"
)

// maxFile bounds a file search reads: a larger one isn't indexed.
// maxCopy bounds a conversation's copy, which grows as long as it goes
// on: past it, the copy isn't indexed (and search says so).
const (
	maxFile = 1 << 20
	maxCopy = 64 << 20
)

// copiesDir is where memory keeps its own copies, of the conversations
// kept compact or by a driver, relative to the agent's home.
const copiesDir = "memory/copies"

// stamp is a file's modification time and size.
func stamp(info fs.FileInfo) string { return stampOf(info.ModTime().UnixNano(), info.Size()) }

// stampOf is the stamp of a modification time (ns) and a size.
func stampOf(ns, size int64) string {
	var b [32]byte
	out := strconv.AppendInt(b[:0], ns, 36)
	out = append(out, '-')
	return string(strconv.AppendInt(out, size, 36))
}

// statStamp is the stamp of the file at path, "" when there is none.
func statStamp(path string) (string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return stamp(info), nil
}

// regularStamp is statStamp of a conversation's file its driver reads,
// which must be a regular file, not followed: a named pipe would hold
// the driver's read, and memory's lock with it, for good.
func regularStamp(path string) (string, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s %w", filepath.Base(path), store.ErrNotRegular)
	}
	return stamp(info), nil
}

// notesSource is the notes as a source; ok is false when there are none.
func (m *Memory) notesSource() (Source, bool, error) {
	s, err := statStamp(m.paths.Notes())
	if err != nil || s == "" {
		return Source{Name: NotesName}, false, err
	}
	return Source{Name: NotesName, Kind: KindNotes, File: NotesName, Stamp: s}, true, nil
}

// scan lists every source search reads now, with its stamp: the notes,
// the files of files/ and skills/ (text files up to maxFile, none in a
// folder whose name starts with a dot, no link followed), and each
// conversation. A source that can't be read is left out and said in
// skipped, by name. The files and the conversations are looked at side
// by side. With a watcher, each folder read is watched before it is.
func (m *Memory) scan(ctx context.Context) (srcs map[string]Source, skipped map[string]string, err error) {
	srcs, skipped = map[string]Source{}, map[string]string{}
	m.watch("")
	m.watch("memory")
	if s, ok, err := m.notesSource(); err != nil {
		return nil, nil, err
	} else if ok {
		srcs[s.Name] = s
	}
	var chats []Source
	var chatsSkipped map[string]string
	var chatsErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		chats, chatsSkipped, chatsErr = m.scanChats(ctx)
	}()
	files, filesSkipped, err := m.scanFiles(ctx)
	<-done
	if err == nil {
		err = chatsErr
	}
	if err != nil {
		return nil, nil, err
	}
	for _, list := range [][]Source{files, chats} {
		for _, s := range list {
			srcs[s.Name] = s
		}
	}
	for _, sk := range []map[string]string{filesSkipped, chatsSkipped} {
		for n, why := range sk {
			skipped[n] = why
		}
	}
	return srcs, skipped, nil
}

// watch watches the folder rel of the home, when there is a watcher.
func (m *Memory) watch(rel string) {
	if m.w != nil {
		m.w.add(rel)
	}
}

// scanFiles lists the files of files/ and skills/: each folder watched,
// then read once, each file looked at in it (statIn), no folder whose
// name starts with a dot, no link followed.
func (m *Memory) scanFiles(ctx context.Context) (srcs []Source, skipped map[string]string, err error) {
	skipped = map[string]string{}
	for _, area := range []string{AreaFiles, AreaSkills} {
		if srcs, err = m.walkFiles(ctx, area, srcs, skipped); err != nil {
			return nil, nil, err
		}
	}
	return srcs, skipped, nil
}

// walkFiles adds to srcs the files of the folder name (of files/ or
// skills/) and of its folders, each watched before it is read.
func (m *Memory) walkFiles(ctx context.Context, name string, srcs []Source, skipped map[string]string) ([]Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.watch(name)
	// Never through a link: an area, or a folder swapped for one since it
	// was listed, may point at another agent's files.
	f, err := fsx.Open(filepath.Join(m.paths.Root, filepath.FromSlash(name)), os.O_RDONLY, 0)
	if errors.Is(err, fsx.ErrSymlink) {
		skipped[name] = "a symbolic link, not followed: an agent's files are never read through one"
		return srcs, nil
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			skipped[name] = err.Error()
		}
		return srcs, nil
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		f.Close()
		skipped[name] = err.Error()
		return srcs, nil
	}
	var dirs []string
	for _, e := range entries {
		switch n := e.Name(); {
		case e.IsDir():
			if !strings.HasPrefix(n, ".") {
				dirs = append(dirs, n)
			}
		case e.Type().IsRegular():
			if s, size, ok := statIn(f, n); ok && size <= maxFile {
				srcs = append(srcs, Source{Name: name + "/" + n, Kind: KindFile, File: name + "/" + n, Stamp: s})
			} else if ok {
				m.large[name+"/"+n] = size
			}
		}
	}
	f.Close()
	for _, d := range dirs {
		if srcs, err = m.walkFiles(ctx, name+"/"+d, srcs, skipped); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}

// scanChats lists the conversations, each one's folder watched before
// it is looked at.
func (m *Memory) scanChats(ctx context.Context) (srcs []Source, skipped map[string]string, err error) {
	skipped = map[string]string{}
	m.watch(AreaChats)
	threads, err := router.Threads(ctx, m.paths)
	if errors.Is(err, router.ErrChatsSymlink) {
		skipped[AreaChats] = router.ErrChatsSymlink.Error()
		return nil, skipped, nil
	}
	if err != nil || len(threads) == 0 {
		return nil, skipped, err
	}
	chats, err := router.OpenChats(m.paths)
	if chats == nil || err != nil {
		return nil, nil, err
	}
	defer chats.Close()
	for _, th := range threads {
		s, ok, err := m.chatSource(ctx, chats, th)
		if err != nil {
			skipped[AreaChats+"/"+th] = err.Error()
			continue
		}
		if ok {
			srcs = append(srcs, s)
		}
	}
	return srcs, skipped, ctx.Err()
}

// chatSource is thread's conversation as a source, its driver asked of
// the store's registry (store/driver), never named here. One whose
// driver keeps its events and its copy for people (chat.md) in its
// folder (the log) is that copy, stamped by it. One whose driver keeps
// its events in its folder without a copy (compact) is stamped by the
// files its driver registered as holding them; one kept elsewhere (in
// SQLite's file, off the machine) by its last event, asked of its driver
// (localStamp says when). Both are read through memory's own copy, made
// when the stamp changes. ok is false for a conversation with nothing to
// read.
func (m *Memory) chatSource(ctx context.Context, chats *os.File, th string) (Source, bool, error) {
	dir, err := m.paths.Conversation(th)
	if err != nil {
		return Source{}, false, err
	}
	src := Source{Name: AreaChats + "/" + th, Kind: KindChat, thread: th}
	folder := filepath.Base(dir)
	m.watch(AreaChats + "/" + folder)
	copyName := AreaChats + "/" + folder + "/" + transcript.File
	// A copy, as last seen, is looked at alone, in the open chats folder:
	// a conversation moved to another driver (lnk agent chat convert) is
	// a new folder put in its place, which the next full look sees, since
	// a log's copy is never removed but with its folder.
	if k, ok := m.drivers[dir]; ok && k.copy {
		if s, _, regular := statIn(chats, folder+"/"+transcript.File); regular {
			src.driver, src.File, src.Stamp = k.driver, copyName, s
			return src, true, nil
		}
	}
	name, err := m.driverOf(dir)
	if err != nil || name == "" {
		return Source{}, false, err
	}
	src.driver = name
	d, _ := driver.Lookup(name)
	switch {
	case copyKept(name):
		info, err := os.Stat(filepath.Join(dir, transcript.File))
		if errors.Is(err, fs.ErrNotExist) {
			return Source{}, false, nil
		}
		if err != nil {
			return Source{}, false, err
		}
		k := m.drivers[dir]
		k.copy = true
		m.drivers[dir] = k
		src.File, src.Stamp = copyName, stamp(info)
		return src, true, nil
	case d.InFolder():
		var parts []string
		for _, f := range d.Events {
			s, err := regularStamp(filepath.Join(dir, f))
			if err != nil {
				return Source{}, false, err
			}
			parts = append(parts, s)
		}
		src.Stamp = name + ":" + strings.Join(parts, ":")
	default:
		if m.cfg.Conversations == nil {
			return Source{}, false, fmt.Errorf("kept by %s, which memory wasn't given: %w", name, driver.ErrNoDriver)
		}
		m.offMachine[th] = true // no folder of its own shows it changed: looked at each look
		s, err := m.elsewhereStamp(ctx, chats, th, name)
		if err != nil {
			return Source{}, false, err
		}
		src.Stamp = s
	}
	if m.cfg.Conversations == nil {
		return Source{}, false, fmt.Errorf("kept %s, and memory wasn't given its driver: %w", name, driver.ErrNoDriver)
	}
	folderName, _ := contract.ThreadFolder(th)
	src.File = copiesDir + "/" + folderName + ".md"
	return src, true, nil
}

// copyKept says the driver name keeps a conversation's events in its
// folder and its copy for people (chat.md) beside them, as each turn is
// written (the log, registered so): memory reads that copy as it is.
func copyKept(name string) bool {
	d, ok := driver.Lookup(name)
	return ok && d.InFolder() && !d.NoTranscript
}

// elsewhereStamp is the stamp of a conversation kept outside its folder:
// its last event's number, asked of its driver when the files of the
// conversations folder itself (a driver's own there, such as SQLite's
// database) changed since it was last asked, and else at most every
// OffMachineEvery (a driver off the machine changes no file here);
// between, the stamp it was indexed at.
func (m *Memory) elsewhereStamp(ctx context.Context, chats *os.File, th, name string) (string, error) {
	now := m.now()
	local, err := m.localStamp(chats)
	if err != nil {
		return "", err
	}
	if c, ok := m.checked[th]; ok && c.local == local && now.Sub(c.at) < m.cfg.OffMachineEvery {
		if s, ok := m.lastStamps[AreaChats+"/"+th]; ok {
			return s, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	last, err := store.Latest(ctx, m.cfg.Conversations, th, 1)
	if err != nil {
		return "", err
	}
	m.checked[th] = asked{at: now, local: local}
	if len(last) == 0 {
		return name + ":0", nil
	}
	return name + ":" + strconv.FormatInt(last[0].Seq, 10), nil
}

// asked is when a conversation kept outside its folder was last asked
// for its last event, and the conversations folder's own files then.
type asked struct {
	at    time.Time
	local string
}

// localStamp is the stamp of the files of the conversations folder that
// are no conversation's (a driver's own, such as SQLite's database and
// its log), each by name, size and modification time: read once for
// each opening of the folder (a look's, a read's), kept in m.local.
func (m *Memory) localStamp(chats *os.File) (string, error) {
	if m.local.chats == chats {
		return m.local.stamp, nil
	}
	names, err := chats.Readdirnames(-1)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", AreaChats, err)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		if s, _, regular := statIn(chats, n); regular {
			b.WriteString(n + "=" + s + ";")
		}
	}
	m.local.chats, m.local.stamp = chats, b.String()
	return m.local.stamp, nil
}

// driverOf is the name of the driver that keeps the conversation in dir
// (driver.Of), known again without reading the folder while its modification time is
// unchanged: what says how a conversation is kept (a driver's marker,
// events.zst) is a name added to the folder, which changes its time.
// A conversation not begun is read each time.
func (m *Memory) driverOf(dir string) (string, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // no conversation
	}
	if err != nil {
		return "", err
	}
	at := info.ModTime().UnixNano()
	if k, ok := m.drivers[dir]; ok && k.at == at {
		return k.driver, nil
	}
	name, err := driver.Of(dir)
	if err != nil || name == "" {
		return name, err
	}
	m.drivers[dir] = driverAt{driver: name, at: at}
	return name, nil
}

// driverAt is the name of the driver that keeps a conversation, as known
// at its folder's time, and for a log whether its copy was seen there.
type driverAt struct {
	driver string
	at     int64
	copy   bool
}
