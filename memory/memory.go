package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/home"
)

// Config is what a Memory is made of. Paths and Index are needed.
type Config struct {
	// Paths are the agent's: memory reads its home alone.
	Paths store.Paths
	// Conversations reads any conversation of the agent however it is
	// kept, for the copies memory makes of those kept compact or by a
	// driver; nil reads only the logs' own copies (chat.md).
	Conversations store.Conversations
	// Index is the search index (memory/fts).
	Index Index
	// Files reads the agent's files, confined to its home and never
	// through a link; nil is store/home's, over the home of Paths.
	Files store.Files
	// Embedder, when not nil, embeds text with a local model for a
	// hybrid ranking; EmbedNote says why there is none when nil ("no
	// OLLAMA_HOST"), said with each search.
	Embedder  Embedder
	EmbedNote string
	// SyncBudget is how long a search waits for the index to take in
	// what changed before answering from what it has, saying so; 0 is
	// 10 s.
	SyncBudget time.Duration
	// OffMachineEvery is how often a conversation kept outside its folder
	// is asked for its last event while no file of the conversations
	// folder itself has changed (none does for one kept off the machine;
	// SQLite's file does as it is written); 0 is 30 s.
	OffMachineEvery time.Duration
	// FullLookEvery is how often a search looks at every source's stamp
	// even with the kernel's record of what changed (Linux's inotify),
	// for a change it doesn't report (a write through a memory map); 0
	// is a minute. Without that record every search looks at every
	// source.
	FullLookEvery time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger gets what goes wrong outside a call's answer; nil logs
	// nothing.
	Logger *slog.Logger
}

// Memory is an agent's memory: its notes, search, read, list and links.
// It runs nothing between calls.
type Memory struct {
	cfg   Config
	paths store.Paths
	idx   Index
	files store.Files

	syncMu     sync.Mutex          // one sync at a time, and what follows
	checked    map[string]asked    // conversations kept outside their folder: when last asked
	lastStamps map[string]string   // the stamps the index had at the last sync
	drivers    map[string]driverAt // how each conversation's folder says it is kept

	// The sources as last looked at, by name, and those that couldn't
	// be read, with why; nil until the first look.
	srcs    map[string]Source
	skipped map[string]string
	// w is the kernel's record of what changed since (nil without one:
	// noWatch when the system can't give it), lastFull when every source
	// was last looked at, offMachine the conversations kept outside
	// their folder, looked at each time, and local the stamp of the
	// conversations folder's own files as last read (localStamp).
	w           *watcher
	noWatch     bool
	loggedWrong bool
	lastFull    time.Time
	offMachine  map[string]bool
	local       struct {
		chats *os.File // the opening of the conversations folder stamp is of
		stamp string
	}
	large     map[string]int64 // the files past maxFile, not indexed: their sizes
	fullLooks int              // how many looks were at every source, for tests
	// unsynced are the sources looked at again since they last matched
	// the index, compared with it at the next sync; all of them when
	// syncAll, or when the index's stamps are of another generation
	// than stampsGen.
	unsynced  map[string]bool
	syncAll   bool
	stampsGen uint64
}

// New makes the memory of the agent at cfg.Paths.
func New(cfg Config) (*Memory, error) {
	if cfg.Paths.Root == "" {
		return nil, errors.New("memory: no agent's paths")
	}
	if cfg.Index == nil {
		return nil, errors.New("memory: no index")
	}
	if cfg.SyncBudget <= 0 {
		cfg.SyncBudget = 10 * time.Second
	}
	if cfg.OffMachineEvery <= 0 {
		cfg.OffMachineEvery = 30 * time.Second
	}
	if cfg.FullLookEvery <= 0 {
		cfg.FullLookEvery = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Files == nil {
		cfg.Files = home.Files{Home: filepath.Dir(filepath.Dir(cfg.Paths.Root))}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Memory{cfg: cfg, paths: cfg.Paths, idx: cfg.Index, files: cfg.Files, checked: map[string]asked{}, drivers: map[string]driverAt{}, offMachine: map[string]bool{}, large: map[string]int64{}}, nil
}

// Relative is s with every path of the agent's home in it said relative
// to that home (files/a.md, chats/link-work), and any other path under
// the folder of every agent's home said from <home> (<home>/agents/ann):
// what memory tells the model names no path of the machine, as an error
// of the store's or the system's would (detect /home/ann/.config/lnk/...).
func (m *Memory) Relative(s string) string {
	sep := string(filepath.Separator)
	root := filepath.Clean(m.paths.Root)
	if root == "." || root == sep {
		return s
	}
	s = strings.ReplaceAll(s, root+sep, "")
	s = strings.ReplaceAll(s, root, ".")
	if home := filepath.Dir(filepath.Dir(root)); home != "." && home != sep {
		s = strings.ReplaceAll(s, home, "<home>")
	}
	return s
}

// Close closes the index, and the watch of the home's folders.
func (m *Memory) Close() error {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	err := m.idx.Close()
	if m.w != nil {
		err = errors.Join(err, m.w.close())
		m.w = nil
		m.noWatch = true
	}
	return err
}

func (m *Memory) now() time.Time { return m.cfg.Now() }

// notesChanged takes the notes into the index at once, so the next search
// finds what was just remembered and not what was just forgotten (the
// check before each search would too; this keeps it one source's work).
func (m *Memory) notesChanged(ctx context.Context) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	src, ok, err := m.notesSource()
	if err == nil {
		err = m.take(ctx, []Source{src}, !ok)
	}
	if err != nil {
		m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "index the notes", slog.String("agent", m.paths.Agent), slog.String("err", err.Error()))
	}
}

// readFile reads the file of the agent's home named (slash-separated,
// relative to it) through Files, at most max bytes: a longer one gives
// its first max bytes and cut true. A link on the way, or a name that
// leaves the home, is ErrOutside.
func (m *Memory) readFile(ctx context.Context, name string, max int) (b []byte, cut bool, err error) {
	b, err = m.files.ReadFile(ctx, m.paths.Agent, name, max)
	switch {
	case errors.Is(err, store.ErrTooLarge):
		return b, true, nil
	case errors.Is(err, store.ErrSymlink), errors.Is(err, store.ErrBadName):
		return nil, false, fmt.Errorf("%s: %w: %w", name, err, ErrOutside)
	}
	return b, false, err
}
