// Package folder keeps the files of a conversation's folder that aren't
// its events: the tools it was narrowed to (tools.json), a turn asked to
// end (end), and the names of the answers still to hand over
// (answers.json, store/delivery's), whichever driver keeps its events.
package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// The files of a conversation's folder that aren't events.
const (
	Tools   = "tools.json"   // the tools the conversation was narrowed to
	End     = "end"          // a turn asked to end
	Answers = "answers.json" // answers still to hand over (store/delivery)

	// AnswersAside begins the name of an answers.json set aside because
	// it didn't read, then the time it was: kept for a person to look at.
	AnswersAside = Answers + ".corrupt-"
)

// Carried are the files a conversation's folder holds beside its events
// that a convert moves along with them; a fork takes tools.json alone.
// Every answers.json set aside (AnswersAside) goes along too.
var Carried = []string{Tools, End, Answers}

// MaxFile bounds what a reader of tools.json or answers.json reads, so
// a file grown wrong can't make it hold an unbounded amount.
const MaxFile = 64 << 20

// Files are the files of each conversation's folder of one agent that
// aren't events: the tools it was narrowed to and a turn asked to end.
// Every write replaces its file whole (a temporary file, synced, renamed
// over it), so a reader never sees half of one and a crash leaves the old
// or the new. Writers of one folder, in this process or another, take the
// folder's lock first.
type Files struct {
	Paths store.Paths

	mu sync.Mutex // orders this process's writers, the lock others'
}

var _ store.ToolsKeeper = (*Files)(nil)

// ReadTools reads the tools thread was narrowed to: nil when it never was
// (every tool), else the list, empty for none.
func (f *Files) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	path, err := f.Paths.ConversationFile(thread, Tools)
	if err != nil {
		return nil, err
	}
	b, err := Read(path)
	if err != nil || b == nil {
		return nil, err
	}
	tools, err := store.ParseTools(b)
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return tools, nil
}

// WriteTools writes tools as the tools file at path holds them
// (store.ParseTools reads it back): a JSON list, a line.
func WriteTools(path string, tools []string) error {
	b, err := json.Marshal(tools)
	if err != nil {
		return err
	}
	return Write(path, append(b, '\n'))
}

// NarrowTools narrows thread's tools by a message's list (nil: the message
// named none, and they stay), as contract.Narrow does: to the tools in both,
// never wider. It returns the tools the conversation has from now on, and
// writes them only when they changed.
func (f *Files) NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error) {
	if by == nil {
		return f.ReadTools(ctx, thread)
	}
	var out *[]string
	err := f.update(ctx, thread, func(dir string) error {
		cur, err := f.ReadTools(ctx, thread)
		if err != nil {
			return err
		}
		out = contract.Narrow(cur, by)
		if cur != nil && equalStrings(*cur, *out) {
			return nil
		}
		return WriteTools(filepath.Join(dir, Tools), *out)
	})
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	return out, nil
}

// AskEnd records that a turn of thread was asked to end, at at.
func (f *Files) AskEnd(ctx context.Context, thread string, at time.Time) error {
	err := f.update(ctx, thread, func(dir string) error {
		return Write(filepath.Join(dir, End), []byte(at.UTC().Format(time.RFC3339Nano)+"\n"))
	})
	if err != nil {
		return fmt.Errorf("ask %s to end: %w", thread, err)
	}
	return nil
}

// EndAsked says whether a turn of thread was asked to end, and when. A
// file whose time doesn't read still says it was asked, at the zero time.
func (f *Files) EndAsked(ctx context.Context, thread string) (time.Time, bool, error) {
	path, err := f.Paths.ConversationFile(thread, End)
	if err != nil {
		return time.Time{}, false, err
	}
	b, err := Read(path)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read end of %s: %w", thread, err)
	}
	if b == nil {
		return time.Time{}, false, nil
	}
	at, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return at, true, nil
}

// ClearEnd forgets that a turn of thread was asked to end; none asked is
// not an error.
func (f *Files) ClearEnd(ctx context.Context, thread string) error {
	path, err := f.Paths.ConversationFile(thread, End)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear end of %s: %w", thread, err)
	}
	return nil
}

// update runs fn with thread's folder made and locked, in this process and
// against others.
func (f *Files) update(ctx context.Context, thread string, fn func(dir string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir, unlock, err := Lock(ctx, f.Paths, thread)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(dir)
}

// Lock takes the lock of thread's folder against every writer of it, in
// this process (each through its own open folder) and in others, waiting
// until it is had or ctx ends, and returns the folder. A folder not there
// yet is made first under the conversations folder's lock, which a
// convert holds while it renames a conversation's folder aside and puts
// the new one in its place, so none is made in that moment; and the lock
// had is that of the folder in place when it is had (fsx.LockDir).
func Lock(ctx context.Context, p store.Paths, thread string) (dir string, unlock func(), err error) {
	dir, err = p.Conversation(thread)
	if err != nil {
		return "", nil, err
	}
	for try := 1; ; try++ {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			if err := makeFolder(ctx, p.Chats(), dir); err != nil {
				return "", nil, err
			}
		}
		unlock, err = fsx.LockDir(ctx, dir)
		if errors.Is(err, fs.ErrNotExist) && try < 8 {
			continue // renamed aside as it was opened: the new one, or made again, next time
		}
		if err != nil {
			return "", nil, err
		}
		return dir, unlock, nil
	}
}

// makeFolder makes dir in chats under chats' lock; one there already is
// not an error.
func makeFolder(ctx context.Context, chats, dir string) error {
	if err := os.MkdirAll(chats, 0o700); err != nil {
		return err
	}
	unlock, err := fsx.LockDir(ctx, chats)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Read reads one of these files whole, nil when there is none; one over
// MaxFile is store.ErrCorrupt.
func Read(path string) ([]byte, error) {
	b, err := fsx.ReadLimit(path, MaxFile)
	if errors.Is(err, fsx.ErrTooBig) {
		return nil, fmt.Errorf("%w: %w", store.ErrCorrupt, err)
	}
	return b, err
}

// Write replaces the file at path with b whole, synced (fsx.Replace).
func Write(path string, b []byte) error { return fsx.Replace(path, b, true) }

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
