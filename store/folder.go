package store

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
)

// The files of a conversation's folder that aren't events: what the folder
// keeps beside them, whichever way its events are kept.
const (
	ToolsFile   = "tools.json"   // the tools the conversation was narrowed to
	EndFile     = "end"          // a turn asked to end
	AnswersFile = "answers.json" // answers still to hand over
	CopyFile    = "chat.md"      // the copy for people

	// AnswersAside begins the name of an answers.json set aside because
	// it didn't read, then the time it was: kept for a person to look at.
	AnswersAside = AnswersFile + ".corrupt-"
)

// KeptFiles are the files a conversation's folder keeps that aren't
// events, moved along when it is converted and copied (tools.json only)
// when it is forked.
var KeptFiles = []string{ToolsFile, EndFile, AnswersFile}

// MaxKeptFile bounds what a reader of tools.json or answers.json reads, so
// a file grown wrong can't make it hold an unbounded amount.
const MaxKeptFile = 64 << 20

// ConversationFile is the path of the file name in thread's folder.
func (p Paths) ConversationFile(thread, name string) (string, error) {
	dir, err := p.Conversation(thread)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Folders keeps what isn't an event in each conversation's folder of one
// agent: the tools it was narrowed to and a turn asked to end (the
// answers still to hand over are store/delivery's). Every write replaces its file whole (a
// temporary file, synced, renamed over it), so a reader never sees half
// of one and a crash leaves the old or the new. Writers of one folder,
// in this process or another, take the folder's lock first.
type Folders struct {
	Paths Paths

	mu sync.Mutex // orders this process's writers, the lock others'
}

// ReadTools reads the tools thread was narrowed to: nil when it never was
// (every tool), else the list, empty for none.
func (f *Folders) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	path, err := f.Paths.ConversationFile(thread, ToolsFile)
	if err != nil {
		return nil, err
	}
	b, err := readKept(path)
	if err != nil || b == nil {
		return nil, err
	}
	tools, err := ParseTools(b)
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return tools, nil
}

// ParseTools reads tools.json: a JSON list of tool names, each as the
// contract allows one.
func ParseTools(b []byte) (*[]string, error) {
	var tools []string
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, fmt.Errorf("%w: %s is not a list of names: %v", ErrCorrupt, ToolsFile, err)
	}
	if tools == nil {
		return nil, fmt.Errorf("%w: %s is null, not a list", ErrCorrupt, ToolsFile)
	}
	if len(tools) > contract.MaxTools {
		return nil, fmt.Errorf("%w: %s lists %d tools, over %d", ErrCorrupt, ToolsFile, len(tools), contract.MaxTools)
	}
	for _, t := range tools {
		if err := contract.CheckToolName(t); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, ToolsFile, err)
		}
	}
	return &tools, nil
}

// NarrowTools narrows thread's tools by a message's list (nil: the message
// said none, and they stay), as contract.Narrow does: to the tools in both,
// never wider. It returns the tools the conversation has from now on, and
// writes them only when they changed.
func (f *Folders) NarrowTools(ctx context.Context, thread string, said *[]string) (*[]string, error) {
	if said == nil {
		return f.ReadTools(ctx, thread)
	}
	var out *[]string
	err := f.update(ctx, thread, func(dir string) error {
		kept, err := f.ReadTools(ctx, thread)
		if err != nil {
			return err
		}
		out = contract.Narrow(kept, said)
		if kept != nil && equalStrings(*kept, *out) {
			return nil
		}
		b, err := json.Marshal(*out)
		if err != nil {
			return err
		}
		return writeAtomic(filepath.Join(dir, ToolsFile), append(b, '\n'))
	})
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	return out, nil
}

// AskEnd records that a turn of thread was asked to end, at at.
func (f *Folders) AskEnd(ctx context.Context, thread string, at time.Time) error {
	err := f.update(ctx, thread, func(dir string) error {
		return writeAtomic(filepath.Join(dir, EndFile), []byte(at.UTC().Format(time.RFC3339Nano)+"\n"))
	})
	if err != nil {
		return fmt.Errorf("ask %s to end: %w", thread, err)
	}
	return nil
}

// EndAsked says whether a turn of thread was asked to end, and when. A
// file whose time doesn't read still says it was asked, at the zero time.
func (f *Folders) EndAsked(ctx context.Context, thread string) (time.Time, bool, error) {
	path, err := f.Paths.ConversationFile(thread, EndFile)
	if err != nil {
		return time.Time{}, false, err
	}
	b, err := readKept(path)
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
func (f *Folders) ClearEnd(ctx context.Context, thread string) error {
	path, err := f.Paths.ConversationFile(thread, EndFile)
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
func (f *Folders) update(ctx context.Context, thread string, fn func(dir string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := f.Paths.Conversation(thread)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := fsx.LockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(dir)
}

// readKept reads a kept file whole, nil when there is none.
func readKept(path string) ([]byte, error) {
	b, err := fsx.ReadLimit(path, MaxKeptFile)
	if errors.Is(err, fsx.ErrTooBig) {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return b, err
}

// writeAtomic replaces path with b, synced (fsx.Replace).
func writeAtomic(path string, b []byte) error { return fsx.Replace(path, b, true) }

// writeDerived replaces path with b by rename, as writeAtomic does, so a
// reader never sees half of it, but syncs nothing: for a file made again
// from the events whenever it isn't what they say (the copy for people),
// which a machine's stop may leave old, empty or missing.
func writeDerived(path string, b []byte) error { return fsx.Replace(path, b, false) }

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

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }
