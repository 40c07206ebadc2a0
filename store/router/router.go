// Package router keeps the conversations of one agent, each through the
// driver that keeps it, as its folder says (store/driver), beginning a
// new one the way the spec's [storage] conversations says; and lists the
// agent's conversations (Threads).
package router

import (
	"context"
	"fmt"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// Router keeps the conversations of one agent, each the way its folder
// says (driver.Of), and begins a new one the way the spec's [storage]
// conversations says. It holds nothing of a conversation between calls
// but the kind its folder said (kindMemo), trusted only while the folder
// is unchanged (one lstat a call, and one of the log's events.jsonl), so
// a conversation converted under it is read where it now is.
type Router struct {
	paths   store.Paths
	kind    string
	drivers map[string]store.Conversations
}

var (
	_ store.Conversations = (*Router)(nil)
	_ store.LatestReader  = (*Router)(nil)
)

// New routes the conversations of the agent at p among drivers, by
// name (log and compact among them, and each store driver by its own),
// beginning a new conversation with kind's; "" is the registered
// default's (driver.Default: the log).
func New(p store.Paths, kind string, drivers map[string]store.Conversations) (*Router, error) {
	if kind == "" {
		kind = driver.Default()
	}
	if err := driver.CheckName(kind); err != nil {
		return nil, err
	}
	if drivers[kind] == nil {
		return nil, fmt.Errorf("route conversations of %s: new ones are %s: %w", p.Agent, kind, driver.ErrNoDriver)
	}
	if err := CheckChats(p); err != nil {
		return nil, fmt.Errorf("route conversations of %s: %w", p.Agent, err)
	}
	return &Router{paths: p, kind: kind, drivers: drivers}, nil
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
func (r *Router) driver(thread string) (store.Conversations, string, string, error) {
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
		return nil, "", "", fmt.Errorf("%s is kept by %s: %w", thread, kind, driver.ErrNoDriver)
	}
	if !begun {
		return d, kind, dir, nil
	}
	return d, "", dir, nil
}

// Append writes e through the driver that keeps thread; the first event
// of a conversation not begun makes its folder and marker first.
func (r *Router) Append(ctx context.Context, thread string, e store.Event) error {
	d, mark, dir, err := r.driver(thread)
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if mark != "" {
		if err := driver.Mark(dir, mark); err != nil {
			return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
		}
	}
	return d.Append(ctx, thread, e)
}

// Read reads thread through the driver that keeps it.
func (r *Router) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return d.Read(ctx, thread, from)
}

// Latest reads thread's last n events through the driver that keeps it.
func (r *Router) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return store.Latest(ctx, d, thread, n)
}

// Lease takes thread's lease through the driver that keeps it.
func (r *Router) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	d, _, _, err := r.driver(thread)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s: %w", thread, err)
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
