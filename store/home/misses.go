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
// sees it. A folder changed in the last Settle is not trusted to show
// the next change in its times (a file system keeps them to a clock's
// tick) and its misses are looked for again. Where no folder's identity
// is known (off Linux), nothing is remembered. Safe for concurrent use.
type Misses struct {
	Files
	// Now is the clock a folder's times are compared with; nil is
	// time.Now.
	Now func() time.Time

	mu      sync.Mutex
	missing map[missKey]stamp
}

// Settle is how long after its last change a folder's times are trusted
// to change with its next one.
const Settle = 2 * time.Second

// maxMisses bounds the names remembered.
const maxMisses = 1024

type missKey struct{ agent, name string }

var _ store.Files = (*Misses)(nil)

// ReadFile is Files.ReadFile, a name remembered missing answered from
// memory while its folder is unchanged.
func (m *Misses) ReadFile(ctx context.Context, agent, name string, max int) ([]byte, error) {
	if m.stillMissing(ctx, agent, name) {
		return nil, notExist(name)
	}
	b, err := m.Files.ReadFile(ctx, agent, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		m.remember(ctx, agent, name, func() bool {
			_, err := m.Files.Stat(ctx, agent, name)
			return errors.Is(err, fs.ErrNotExist)
		})
	}
	return b, err
}

// ReadDir is Files.ReadDir, a name remembered missing answered from
// memory while its folder is unchanged.
func (m *Misses) ReadDir(ctx context.Context, agent, name string, max int) ([]store.DirEntry, error) {
	if m.stillMissing(ctx, agent, name) {
		return nil, notExist(name)
	}
	es, err := m.Files.ReadDir(ctx, agent, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		m.remember(ctx, agent, name, func() bool {
			_, err := m.Files.Stat(ctx, agent, name)
			return errors.Is(err, fs.ErrNotExist)
		})
	}
	return es, err
}

func notExist(name string) error {
	return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// stillMissing says name is remembered missing and its folder is as it
// was; a folder changed forgets it.
func (m *Misses) stillMissing(ctx context.Context, agent, name string) bool {
	if ctx.Err() != nil {
		return false
	}
	k := missKey{agent, name}
	m.mu.Lock()
	s, ok := m.missing[k]
	m.mu.Unlock()
	if !ok {
		return false
	}
	if now, err := stampOf(s.dir); err == nil && now == s {
		return true
	}
	m.mu.Lock()
	delete(m.missing, k)
	m.mu.Unlock()
	return false
}

// remember remembers name as missing if its nearest folder there has
// settled and gone is still true after that folder was looked at: what
// is made after the look changes the folder's times.
func (m *Misses) remember(ctx context.Context, agent, name string, gone func() bool) {
	if store.CheckFileName(name) != nil || ctx.Err() != nil {
		return
	}
	root, err := m.root(agent)
	if err != nil {
		return
	}
	s, ok := nearest(root, name)
	if !ok || !s.settled(m.now()) || !gone() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.missing == nil {
		m.missing = map[missKey]stamp{}
	}
	if len(m.missing) < maxMisses {
		m.missing[missKey{agent, name}] = s
	}
}

// nearest is the stamp of the nearest folder of name's path that is
// there, from its own folder up to root.
func nearest(root, name string) (stamp, bool) {
	for dir := path.Dir(name); ; dir = path.Dir(dir) {
		s, err := stampOf(filepath.Join(root, filepath.FromSlash(dir)))
		if err == nil {
			return s, s.known && s.dir != ""
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "." {
			return stamp{}, false
		}
	}
}

func (m *Misses) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}
