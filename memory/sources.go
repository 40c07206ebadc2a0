package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// maxFile bounds a file search reads: a larger one isn't indexed.
const maxFile = 1 << 20

// copiesDir is where memory keeps its own copies, of the conversations
// kept compact or by a driver, relative to the agent's home.
const copiesDir = "memory/copies"

// stamp is a file's modification time and size.
func stamp(info fs.FileInfo) string {
	return strconv.FormatInt(info.ModTime().UnixNano(), 36) + "-" + strconv.FormatInt(info.Size(), 36)
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
// skipped. The files and the conversations are looked at side by side.
func (m *Memory) scan(ctx context.Context) (srcs []Source, skipped []string, err error) {
	if s, ok, err := m.notesSource(); err != nil {
		return nil, nil, err
	} else if ok {
		srcs = append(srcs, s)
	}
	var chats []Source
	var chatsSkipped []string
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
	srcs = append(append(srcs, files...), chats...)
	return srcs, append(filesSkipped, chatsSkipped...), nil
}

// scanFiles lists the files of files/ and skills/.
func (m *Memory) scanFiles(ctx context.Context) (srcs []Source, skipped []string, err error) {
	for _, area := range []string{AreaFiles, AreaSkills} {
		root := filepath.Join(m.paths.Root, area)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				skipped = append(skipped, fmt.Sprintf("%s: %v", m.rel(path), err))
				return nil
			}
			if d.IsDir() {
				if path != root && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // links and the rest are never followed
			}
			info, err := d.Info()
			if err != nil || info.Size() > maxFile {
				return nil
			}
			name := m.rel(path)
			srcs = append(srcs, Source{Name: name, Kind: KindFile, File: name, Stamp: stamp(info)})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
	return srcs, skipped, nil
}

// scanChats lists the conversations.
func (m *Memory) scanChats(ctx context.Context) (srcs []Source, skipped []string, err error) {
	threads, err := store.Threads(ctx, m.paths)
	if err != nil {
		return nil, nil, err
	}
	for _, th := range threads {
		s, ok, err := m.chatSource(ctx, th)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("chats/%s: %v", th, err))
			continue
		}
		if ok {
			srcs = append(srcs, s)
		}
	}
	return srcs, skipped, ctx.Err()
}

// rel is path relative to the agent's home, slash-separated.
func (m *Memory) rel(path string) string {
	r, err := filepath.Rel(m.paths.Root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// chatSource is thread's conversation as a source. A log's is its own
// copy, chat.md, stamped by it. One kept compact is stamped by its
// events' files; one kept by sqlite by its database's; one kept off the
// machine by its last event, asked at most every OffMachineEvery. Both
// are read through memory's own copy, made when the stamp changes. ok
// is false for a conversation with nothing to read.
func (m *Memory) chatSource(ctx context.Context, th string) (Source, bool, error) {
	dir, err := m.paths.Conversation(th)
	if err != nil {
		return Source{}, false, err
	}
	way, err := m.wayOf(dir)
	if err != nil || way == "" {
		return Source{}, false, err
	}
	src := Source{Name: AreaChats + "/" + th, Kind: KindChat, thread: th, way: way}
	switch way {
	case store.Log:
		s, err := statStamp(filepath.Join(dir, store.CopyFile))
		if err != nil || s == "" {
			return Source{}, false, err
		}
		src.File, src.Stamp = m.rel(filepath.Join(dir, store.CopyFile)), s
		return src, true, nil
	case store.Compact:
		var parts []string
		for _, f := range []string{"events.zst", "events.jsonl"} {
			s, err := statStamp(filepath.Join(dir, f))
			if err != nil {
				return Source{}, false, err
			}
			parts = append(parts, s)
		}
		src.Stamp = "compact:" + strings.Join(parts, ":")
	case "sqlite":
		var parts []string
		for _, f := range []string{"events.sqlite", "events.sqlite-wal"} {
			s, err := statStamp(filepath.Join(m.paths.Chats(), f))
			if err != nil {
				return Source{}, false, err
			}
			parts = append(parts, s)
		}
		src.Stamp = "sqlite:" + strings.Join(parts, ":")
	default:
		if m.cfg.Conversations == nil {
			return Source{}, false, fmt.Errorf("kept by %s, which memory wasn't given: %w", way, store.ErrNoDriver)
		}
		s, err := m.offMachineStamp(ctx, th, way)
		if err != nil {
			return Source{}, false, err
		}
		src.Stamp = s
	}
	if m.cfg.Conversations == nil {
		return Source{}, false, fmt.Errorf("kept %s, and memory wasn't given its driver: %w", way, store.ErrNoDriver)
	}
	name, _ := contract.ThreadFolder(th)
	src.File = copiesDir + "/" + name + ".md"
	return src, true, nil
}

// offMachineStamp is the stamp of a conversation kept off the machine:
// its last event's number, asked of its driver at most every
// OffMachineEvery; between, the stamp it was indexed at.
func (m *Memory) offMachineStamp(ctx context.Context, th, way string) (string, error) {
	now := m.now()
	if at, ok := m.checked[th]; ok && now.Sub(at) < m.cfg.OffMachineEvery {
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
	m.checked[th] = now
	if len(last) == 0 {
		return way + ":0", nil
	}
	return way + ":" + strconv.FormatInt(last[0].Seq, 10), nil
}

// wayOf is how the conversation in dir is kept (store.KindOf), known
// again without reading the folder while its modification time is
// unchanged: what says how a conversation is kept (a driver's marker,
// events.zst) is a name added to the folder, which changes its time.
// A conversation not begun is read each time.
func (m *Memory) wayOf(dir string) (string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	at := info.ModTime().UnixNano()
	if k, ok := m.ways[dir]; ok && k.at == at {
		return k.way, nil
	}
	way, err := store.KindOf(dir)
	if err != nil || way == "" {
		return way, err
	}
	m.ways[dir] = wayAt{way: way, at: at}
	return way, nil
}

// wayAt is how a conversation is kept, as known at its folder's time.
type wayAt struct {
	way string
	at  int64
}
