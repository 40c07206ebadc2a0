package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// ErrNoDriver: a conversation is kept by a driver the router wasn't given.
var ErrNoDriver = errors.New("no such driver")

// Opener opens a driver of the conversations of the agent whose
// conversations folder is chats. A driver whose events are in the
// conversation's folder (the log, compact) is opened on a convert's own
// folder too, to write a conversation there before it is put in place.
type Opener func(chats string) (Conversations, error)

// Router keeps the conversations of one agent, each the way its folder
// says (KindOf), and begins a new one the way the spec's [storage]
// conversations says. It holds nothing of a conversation between calls
// but the kind its folder said (kindMemo), trusted only while the folder
// is unchanged (one lstat a call, and one of the log's events.jsonl), so
// a conversation converted under it is read where it now is.
type Router struct {
	paths   Paths
	kind    string
	drivers map[string]Conversations
}

var (
	_ Conversations = (*Router)(nil)
	_ LatestReader  = (*Router)(nil)
)

// NewRouter routes the conversations of the agent at p among drivers, by
// name (log and compact among them, and each store driver by its own),
// beginning a new conversation with kind's.
func NewRouter(p Paths, kind string, drivers map[string]Conversations) (*Router, error) {
	if kind == "" {
		kind = Log
	}
	if err := ParseKind(kind); err != nil {
		return nil, err
	}
	if drivers[kind] == nil {
		return nil, fmt.Errorf("route conversations of %s: new ones are %s: %w", p.Agent, kind, ErrNoDriver)
	}
	if err := CheckChats(p); err != nil {
		return nil, fmt.Errorf("route conversations of %s: %w", p.Agent, err)
	}
	return &Router{paths: p, kind: kind, drivers: drivers}, nil
}

// ParseKind checks a way of keeping conversations as the spec names one:
// log, compact or a driver's name, lowercase letters and digits, which
// names its marker (store.<driver>) and its plugin (lnk-<driver>).
func ParseKind(kind string) error {
	if kind == "" || len(kind) > 32 {
		return fmt.Errorf("conversations are kept %q: a way is log, compact or a driver's name", kind)
	}
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("conversations are kept %q: a driver's name is lowercase letters and digits", kind)
		}
	}
	return nil
}

// Kind says how thread's conversation is kept: as its folder says, or,
// for one not begun, as a new one begins.
func (r *Router) Kind(thread string) (string, error) {
	dir, err := r.paths.Conversation(thread)
	if err != nil {
		return "", err
	}
	kind, err := routerKinds.kindOf(dir)
	if err != nil {
		return "", err
	}
	if kind == "" {
		return r.kind, nil
	}
	return kind, nil
}

// driver is the driver that keeps thread, and its folder.
func (r *Router) driver(thread string) (Conversations, string, string, error) {
	dir, err := r.paths.Conversation(thread)
	if err != nil {
		return nil, "", "", err
	}
	kind, err := routerKinds.kindOf(dir)
	if err != nil {
		return nil, "", "", err
	}
	begun := kind != ""
	if !begun {
		kind = r.kind
	}
	d := r.drivers[kind]
	if d == nil {
		return nil, "", "", fmt.Errorf("%s is kept by %s: %w", thread, kind, ErrNoDriver)
	}
	if !begun {
		return d, kind, dir, nil
	}
	return d, "", dir, nil
}

// Append writes e through the driver that keeps thread; the first event
// of a conversation not begun makes its folder and marker first.
func (r *Router) Append(ctx context.Context, thread string, e Event) error {
	d, mark, dir, err := r.driver(thread)
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if mark != "" {
		if err := Mark(dir, mark); err != nil {
			return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
		}
	}
	return d.Append(ctx, thread, e)
}

// Read reads thread through the driver that keeps it.
func (r *Router) Read(ctx context.Context, thread string, from int64) ([]Event, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return d.Read(ctx, thread, from)
}

// Latest reads thread's last n events through the driver that keeps it.
func (r *Router) Latest(ctx context.Context, thread string, n int) ([]Event, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return Latest(ctx, d, thread, n)
}

// Lease takes thread's lease through the driver that keeps it.
func (r *Router) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (Lease, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return Lease{}, fmt.Errorf("lease %s: %w", thread, err)
	}
	return d.Lease(ctx, thread, holder, ttl)
}

// Release lets thread's lease go through the driver that keeps it.
func (r *Router) Release(ctx context.Context, thread, holder string) error {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return fmt.Errorf("release %s: %w", thread, err)
	}
	return d.Release(ctx, thread, holder)
}

// Threads lists the threads that have a folder, in order: each folder of
// the conversations folder whose name is a thread's.
func (r *Router) Threads(ctx context.Context) ([]string, error) {
	return Threads(ctx, r.paths)
}

// Threads lists the threads of the agent at p that have a folder, in
// order. Names no thread has (a convert's leftovers, events.sqlite) are
// passed over, and so is a thread's folder that is a symbolic link: no
// reader follows one (ListThreads names them).
func Threads(ctx context.Context, p Paths) ([]string, error) {
	threads, _, err := ListThreads(ctx, p)
	return threads, err
}

// ListThreads lists the threads of the agent at p that have a folder, in
// order, as Threads does, and apart from them, in order, the threads whose
// folder is a symbolic link: refused, never followed (nothing is read
// through the link), for a caller that must say a conversation was left
// out, as an export of every conversation does.
func ListThreads(ctx context.Context, p Paths) (threads, links []string, err error) {
	chats, err := OpenChats(p)
	if chats == nil || err != nil {
		return nil, nil, err
	}
	entries, err := chats.ReadDir(-1)
	chats.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("list threads of %s: %w", p.Agent, err)
	}
	for _, e := range entries {
		link := e.Type()&fs.ModeSymlink != 0
		if !e.IsDir() && !link {
			continue
		}
		th, err := contract.FolderThread(e.Name())
		if err != nil {
			continue
		}
		// A folder whose name reads as a thread but isn't that thread's
		// own (none today: the names reverse exactly) is passed over.
		if name, err := contract.ThreadFolder(th); err != nil || filepath.Base(name) != e.Name() {
			continue
		}
		if link {
			links = append(links, th)
		} else {
			threads = append(threads, th)
		}
	}
	sort.Strings(threads)
	sort.Strings(links)
	return threads, links, ctx.Err()
}

// ErrChatsLink: the agent's conversations folder (chats/) is a symbolic
// link, refused: none of its conversations is read or written where it
// points, which may be another agent's. It wraps fsx.ErrLink.
var ErrChatsLink = fmt.Errorf("the agent's conversations folder (chats) is a symbolic link, refused: never followed: %w", fsx.ErrLink)

// CheckChats refuses the agent's conversations folder when it is a
// symbolic link (ErrChatsLink); none is no refusal.
func CheckChats(p Paths) error {
	if fi, err := os.Lstat(p.Chats()); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", p.Chats(), ErrChatsLink)
	}
	return nil
}

// OpenChats opens the agent's conversations folder to list it, never
// through a link (ErrChatsLink); nil when there is none.
func OpenChats(p Paths) (*os.File, error) {
	d, err := fsx.Open(p.Chats(), os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, fsx.ErrLink):
		return nil, fmt.Errorf("%s: %w", p.Chats(), ErrChatsLink)
	case err != nil:
		return nil, fmt.Errorf("list threads of %s: %w", p.Agent, err)
	}
	return d, nil
}
