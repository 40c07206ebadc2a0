package serve

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
)

// childDrivers are the drivers lnk store serve runs that a program may
// leave out of its own process: a conversation kept by one the program
// doesn't link is reached through the store bridge, the driver running in
// a child process (spec: "A conversation kept by another driver than the
// spec's runs that driver in Link harness's sandbox").
var childDrivers = []string{"sqlite", "gcs"}

// Ways are the ways a harness keeps an agent's conversations: the log and
// compact, the spec's own, always in its process; the drivers the
// program links (Linked), also in its process; and each other of
// childDrivers behind the store bridge, in a child process (Sandbox).
type Ways struct {
	// Linked opens each driver the program links, by name, on the
	// conversations folder (lnk: sqlite). lnk-link-harness links none.
	Linked map[string]store.Opener
	// Key is the agent's key, which proves each call to a child.
	Key []byte
	// Env is the harness's environment: where lnk is ($LNK_STORE_COMMAND)
	// and the Cloud Storage bucket of gcs ($LNK_GCS_BUCKET...).
	Env map[string]string
	// Logger gets what a child says and when it ends; nil logs nothing.
	Logger *slog.Logger
	// Bridges are drivers reached through a store bridge already
	// running, by name (a blank unit's, given at its binding): dialed at
	// the first call, in place of a child.
	Bridges map[string]bridge.Config
}

// Drivers opens the ways of keeping the agent's conversations at p. None
// does anything before its first call: a linked driver opens then (SQLite
// makes its file when opened, so an agent that never used it gets none),
// and a child starts then.
func (w Ways) Drivers(p store.Paths) (map[string]store.Conversations, error) {
	out := map[string]store.Conversations{store.Log: log.Open(p.Chats()), store.Compact: compact.Open(p.Chats())}
	for name, open := range w.Linked {
		out[name] = &lazyDriver{open: func() (store.Conversations, error) { return open(p.Chats()) }}
	}
	for name, cfg := range w.Bridges {
		out[name] = &lazyDriver{open: func() (store.Conversations, error) { return bridge.Dial(context.Background(), cfg) }}
	}
	for _, name := range childDrivers {
		if out[name] == nil {
			out[name] = newSandbox(p, name, w)
		}
	}
	return out, nil
}

// Openers opens each way the program has in its process on any folder,
// for a convert stopped midway. A child's driver isn't among them: a
// convert's leftovers in it stay (ResolveConvert says which), as they do
// for any driver that can't forget.
func (w Ways) Openers(store.Paths) map[string]store.Opener {
	out := map[string]store.Opener{
		store.Log:     func(chats string) (store.Conversations, error) { return log.Open(chats), nil },
		store.Compact: func(chats string) (store.Conversations, error) { return compact.Open(chats), nil },
	}
	for name, open := range w.Linked {
		out[name] = open
	}
	return out
}

// lazyDriver opens a linked driver at its first call; one that failed to
// open is opened again at the next.
type lazyDriver struct {
	open func() (store.Conversations, error)
	mu   sync.Mutex
	d    store.Conversations
}

var (
	_ store.Conversations = (*lazyDriver)(nil)
	_ store.LatestReader  = (*lazyDriver)(nil)
	_ store.Closer        = (*lazyDriver)(nil)
)

func (l *lazyDriver) driver() (store.Conversations, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.d != nil {
		return l.d, nil
	}
	d, err := l.open()
	if err != nil {
		return nil, err
	}
	l.d = d
	return d, nil
}

func (l *lazyDriver) Append(ctx context.Context, thread string, e store.Event) error {
	d, err := l.driver()
	if err != nil {
		return err
	}
	return d.Append(ctx, thread, e)
}

func (l *lazyDriver) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	d, err := l.driver()
	if err != nil {
		return nil, err
	}
	return d.Read(ctx, thread, from)
}

func (l *lazyDriver) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	d, err := l.driver()
	if err != nil {
		return nil, err
	}
	return store.Latest(ctx, d, thread, n)
}

func (l *lazyDriver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	d, err := l.driver()
	if err != nil {
		return store.Lease{}, err
	}
	return d.Lease(ctx, thread, holder, ttl)
}

func (l *lazyDriver) Release(ctx context.Context, thread, holder string) error {
	d, err := l.driver()
	if err != nil {
		return err
	}
	return d.Release(ctx, thread, holder)
}

// Close closes the driver if it was opened.
func (l *lazyDriver) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.d.(store.Closer); ok {
		return c.Close()
	}
	return nil
}
