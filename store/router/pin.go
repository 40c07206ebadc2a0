package router

import (
	"context"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// Pinned is one conversation as a turn reaches it through the router.
// While the turn holds its lease, its calls go straight to the driver
// that keeps it, found once: a convert takes the lease before it moves a
// conversation, so under the lease the way it is kept can't change.
// Without the lease, they go through the router, which looks at the
// folder at each call. A Pinned is one turn's: not safe for two at once.
type Pinned struct {
	r      *Router
	thread string
	held   store.Conversations // the driver while the lease is held, nil else
	kind   string              // how held keeps it, "" while none is held
	last   store.Conversations // the driver that held it last, kept after the lease went
}

// Pin is thread's conversation through r, for a turn to pin while it
// holds the lease.
func (r *Router) Pin(thread string) *Pinned { return &Pinned{r: r, thread: thread} }

// Keeper is what the conversation's calls go through: its driver while
// the lease is held, else the router.
func (p *Pinned) Keeper() store.Conversations {
	if p.held != nil {
		return p.held
	}
	return p.r
}

// Reader is what the turn reads the conversation through: its driver
// while the lease is held, and the one that held it after, else the
// router. A turn's look once it let the lease go, for a message that
// joined as it went, reads through the driver that held it: should a
// convert move the conversation in that moment, the look finds nothing
// new, and a message that did join is the sweep's to answer.
func (p *Pinned) Reader() store.Conversations {
	if p.held == nil && p.last != nil {
		return p.last
	}
	return p.Keeper()
}

// Kind is how the conversation is kept while the lease is held, "" while
// it isn't (or it isn't begun).
func (p *Pinned) Kind() string { return p.kind }

// Lease takes (or renews) the conversation's lease for holder and, once
// held, pins the driver that keeps it: the one its folder names, read
// once, whose lease it takes. One not begun yet is pinned to the driver
// that begins it where that driver keeps its events in the folder (the
// log, compact: no marker to write first), so its first turn looks at
// the folder no more: under the lease no other turn begins it, and a
// message another process joins to it is written by a router of the same
// spec, the same way. Begun by a store driver, it stays the router's
// until its first event (Begun).
func (p *Pinned) Lease(ctx context.Context, holder string, ttl time.Duration) error {
	_, err := p.lease(ctx, holder, ttl, nil)
	return err
}

// LeaseRead is Lease, reading the conversation's events from from under
// the lease once held: in one call of the driver that keeps it where the
// driver can (store.LeaseRead).
func (p *Pinned) LeaseRead(ctx context.Context, holder string, ttl time.Duration, from int64) ([]store.Event, error) {
	return p.lease(ctx, holder, ttl, &from)
}

// lease is Lease, and LeaseRead when from is not nil.
func (p *Pinned) lease(ctx context.Context, holder string, ttl time.Duration, from *int64) ([]store.Event, error) {
	take := func(d store.Conversations) ([]store.Event, error) {
		if from == nil {
			_, err := d.Lease(ctx, p.thread, holder, ttl)
			return nil, err
		}
		_, es, err := store.LeaseRead(ctx, d, p.thread, holder, ttl, *from)
		return es, err
	}
	if p.held != nil {
		return take(p.held)
	}
	kind, err := p.folderKind()
	if err != nil {
		return nil, err
	}
	d := p.r.drivers[kind]
	if d == nil {
		d = p.r // not begun, or no such driver: the router begins it, or says so
	}
	es, err := take(d)
	if err != nil {
		return nil, err
	}
	if d, ok := driver.Lookup(p.r.kind); kind == "" && ok && d.InFolder() {
		kind = p.r.kind
	}
	p.hold(kind)
	return es, nil
}

// Begun pins, under the lease, the driver that keeps a conversation
// begun since the lease was taken (by the turn's first event).
func (p *Pinned) Begun() error {
	if p.held != nil {
		return nil
	}
	kind, err := p.folderKind()
	if err != nil {
		return err
	}
	p.hold(kind)
	return nil
}

// Release lets holder's lease go; from then on the router keeps the
// conversation again.
func (p *Pinned) Release(ctx context.Context, holder string) error {
	err := p.Keeper().Release(ctx, p.thread, holder)
	p.held, p.kind = nil, ""
	return err
}

// ReleaseRead is Release, then reads the conversation's events from from
// through Reader, as the lease went: in one call of the driver that held
// it where the driver can (store.ReleaseRead).
func (p *Pinned) ReleaseRead(ctx context.Context, holder string, from int64) ([]store.Event, error) {
	if p.held == nil {
		if err := p.Release(ctx, holder); err != nil {
			return nil, err
		}
		return p.Reader().Read(ctx, p.thread, from)
	}
	es, err := store.ReleaseRead(ctx, p.held, p.thread, holder, from)
	p.held, p.kind = nil, ""
	return es, err
}

// folderKind is how the conversation is kept as its folder says, "" for
// one not begun.
func (p *Pinned) folderKind() (string, error) {
	dir, err := p.r.paths.Conversation(p.thread)
	if err != nil {
		return "", err
	}
	return routerKinds.kindOf(dir)
}

// hold pins the driver of kind while the lease is held; "" (not begun) or
// a kind no driver keeps leaves the conversation the router's.
func (p *Pinned) hold(kind string) {
	if d := p.r.drivers[kind]; kind != "" && d != nil {
		p.held, p.kind, p.last = d, kind, d
	}
}
