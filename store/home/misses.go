package home

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
)

// Misses is Files that remembers the names it found missing, so a turn's
// prompt, which looks for the same few files each turn (the persona, the
// owner's instructions, the notes...), mostly absent, needn't look again:
// a name is remembered with its nearest folder that is there, its
// identity and its times, and is missing still while one look at that
// folder finds them the same. Anything made on the way to the name (the
// file, or a folder of its path) changes that folder's times, or makes
// another folder the one found; so the next read after a file is made
// sees it. A folder changed in the last foldertime.Wait
// (foldertime.WaitFine where its times are kept finer than a second)
// is not trusted to show the next change in its times (a file system
// keeps them to a clock's tick) and its misses are looked for again.
// Where no folder's identity is known (off Linux), nothing is remembered. Safe for concurrent use.
//
// Each read looks at the folders afresh; reads made through one Look
// share their looks, so a prompt's compose, whose names are mostly under
// the home itself, costs one lstat(2) of it when nothing changed.
type Misses struct {
	Files
	// Now is the clock a folder's times are compared with; nil is
	// time.Now.
	Now func() time.Time

	mu      sync.Mutex
	missing map[missKey]stamp
}

// maxMisses bounds the names remembered.
const maxMisses = 1024

type missKey struct{ agent, name string }

var (
	_ store.Files = (*Misses)(nil)
	_ store.Files = (*Look)(nil)
)

// ReadFile is Files.ReadFile, a name remembered missing answered from
// memory while its folder is unchanged.
func (m *Misses) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	return m.look().ReadFile(ctx, agent, name, max)
}

// ReadDir is Files.ReadDir, a name remembered missing answered from
// memory while its folder is unchanged.
func (m *Misses) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	return m.look().ReadDir(ctx, agent, name, max)
}

// Look is m for one pass of reads made together, as a prompt's compose
// makes them: each folder is looked at (lstat) once in it, the first time
// a read needs it, and that look stands for the whole pass. A file made
// after that look is seen by the next Look's reads (its folder's times
// have changed), not necessarily by this one's. Safe for concurrent use;
// it holds nothing open. (prompt.Composer reads each Compose through
// one.)
func (m *Misses) Look() store.Files { return m.look() }

func (m *Misses) look() *Look { return &Look{m: m} }

// Look is Files for one pass of reads through Misses (Misses.Look).
type Look struct {
	m *Misses

	mu sync.Mutex
	// The folders first looked at in the pass, by path: the first few
	// in few (a pass looks at a few, and so makes no map), the rest in
	// folder.
	few    [4]lookedAt
	nFew   int
	folder map[string]looked
}

// lookedAt is a look at the folder dir.
type lookedAt struct {
	dir string
	looked
}

// seen is the pass's look at dir, if any. l.mu is held.
func (l *Look) seen(dir string) (looked, bool) {
	for _, a := range l.few[:l.nFew] {
		if a.dir == dir {
			return a.looked, true
		}
	}
	got, ok := l.folder[dir]
	return got, ok
}

// looked is one look at a folder: its stamp, or the error, and when.
type looked struct {
	s   stamp
	err error
	at  time.Time
}

// ReadFile is Misses.ReadFile, its folders looked at once in the pass.
func (l *Look) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	if l.stillMissing(ctx, agent, name) {
		return nil, notExist(name)
	}
	b, err := l.m.Files.ReadFile(ctx, agent, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		l.remember(ctx, agent, name)
	}
	return b, err
}

// ReadDir is Misses.ReadDir, its folders looked at once in the pass.
func (l *Look) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	if l.stillMissing(ctx, agent, name) {
		return nil, notExist(name)
	}
	es, err := l.m.Files.ReadDir(ctx, agent, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		l.remember(ctx, agent, name)
	}
	return es, err
}

// Stat is Files.Stat: nothing of it is remembered.
func (l *Look) Stat(ctx context.Context, agent, name string) (store.FileInfo, error) {
	return l.m.Files.Stat(ctx, agent, name)
}

func notExist(name string) error {
	return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// look is dir's stamp as first looked at in the pass; before says that
// look was made before this call (by an earlier read of the pass).
func (l *Look) look(dir string) (_ looked, before bool) {
	l.mu.Lock()
	got, ok := l.seen(dir)
	l.mu.Unlock()
	if ok {
		return got, true
	}
	s, err := stampOf(dir)
	got = looked{s: s, err: err, at: l.m.now()}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.few[:l.nFew] {
		if l.few[i].dir == dir { // looked at meanwhile: the latest kept, as in folder
			l.few[i].looked = got
			return got, false
		}
	}
	if l.nFew < len(l.few) {
		l.few[l.nFew] = lookedAt{dir, got}
		l.nFew++
		return got, false
	}
	if l.folder == nil {
		l.folder = map[string]looked{}
	}
	l.folder[dir] = got
	return got, false
}

// stillMissing says name is remembered missing and its folder is as it
// was; a folder changed forgets it.
func (l *Look) stillMissing(ctx context.Context, agent, name string) bool {
	if ctx.Err() != nil {
		return false
	}
	k := missKey{agent, name}
	m := l.m
	m.mu.Lock()
	s, ok := m.missing[k]
	m.mu.Unlock()
	if !ok {
		return false
	}
	if now, _ := l.look(s.dir); now.err == nil && now.s == s {
		return true
	}
	m.mu.Lock()
	delete(m.missing, k)
	m.mu.Unlock()
	return false
}

// remember remembers name, just found missing, as missing if its nearest
// folder there is trusted: when that folder was looked at before the
// read that found name missing, as is; else if name is still missing
// after that look (what is made after the look changes the folder's
// times).
func (l *Look) remember(ctx context.Context, agent, name string) {
	if store.CheckFileName(name) != nil || ctx.Err() != nil {
		return
	}
	m := l.m
	root, err := m.root(agent)
	if err != nil {
		return
	}
	got, before, ok := l.nearest(root, name)
	if !ok || !got.s.trusted(got.at) {
		return
	}
	if !before {
		if _, err := m.Files.Stat(ctx, agent, name); !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.missing == nil {
		m.missing = map[missKey]stamp{}
	}
	if len(m.missing) < maxMisses {
		m.missing[missKey{agent, name}] = got.s
	}
}

// nearest is the look at the nearest folder of name's path that is
// there, from its own folder up to root; before says every look it took
// was made before this call.
func (l *Look) nearest(root, name string) (_ looked, before, ok bool) {
	before = true
	for dir := path.Dir(name); ; dir = path.Dir(dir) {
		got, was := l.look(filepath.Join(root, filepath.FromSlash(dir)))
		before = before && was
		if got.err == nil {
			return got, before, got.s.known && got.s.dir != ""
		}
		if !errors.Is(got.err, fs.ErrNotExist) || dir == "." {
			return looked{}, false, false
		}
	}
}

func (m *Misses) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}
