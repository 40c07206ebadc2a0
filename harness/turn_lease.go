package harness

import (
	"context"
	"log/slog"
	"sync"

	"github.com/lnk-dev/link/store"
)

// renew renews the lease every third of its time, timed by
// Config.AfterFunc, until stop is called.
func (t *turn) renew(ctx context.Context) (stop func()) {
	every := t.with.leaseTTL / 3
	var (
		mu      sync.Mutex // held through a renewal, so stop waits for one running
		stopped bool
		disarm  func() bool
		tick    func()
	)
	tick = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || ctx.Err() != nil {
			return
		}
		if _, err := t.c.keeper().Lease(ctx, t.c.thread, t.holder, t.with.leaseTTL); err != nil {
			t.with.log.LogAttrs(ctx, slog.LevelWarn, "renew a turn's lease", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		}
		disarm = t.with.clock.afterFunc(every, tick)
	}
	mu.Lock()
	defer mu.Unlock()
	disarm = t.with.clock.afterFunc(every, tick)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		disarm()
	}
}

// readAhead is the events from a number, read by the call that took or
// let go the lease (store.LeaseRead, store.ReleaseRead), for the refresh
// that reads from there next.
type readAhead struct {
	from   int64
	events []store.Event
	ok     bool
}

// since is the number the next refresh reads from when events were read
// or kept (the one after the last, or the last again to prove the
// events kept are the conversation's); 0 when none were, and it reads
// the window.
func (r *reader) since() int64 {
	n := len(r.events)
	if n == 0 {
		return 0
	}
	from := r.events[n-1].Seq + 1
	if r.anchored {
		from--
	}
	return from
}

// readSince reads the conversation from from: the events read ahead when
// they are from there, else from the store. What was read ahead serves
// the one refresh after it, or none.
func (r *reader) readSince(ctx context.Context, from int64) ([]store.Event, error) {
	if a := r.ahead; a.ok {
		r.ahead = readAhead{}
		if a.from == from {
			return a.events, nil
		}
	}
	return r.c.reader().Read(ctx, r.c.thread, from)
}

// take takes the turn's lease for a new turn (steerOrBegin, steer): with
// the events kept of the conversation's last turn here (resume), reading
// what the turn's first read wants from the lease's own call, in one call
// of a driver that can (store.LeaseReader); without any, the lease
// alone. The events kept are kept again when the lease is another's.
func (t *turn) take(ctx context.Context) error {
	t.resume()
	from := t.since()
	if from == 0 {
		return t.c.lease(ctx, t.holder, t.with.leaseTTL)
	}
	es, err := t.c.pinned.LeaseRead(ctx, t.holder, t.with.leaseTTL, from)
	if err != nil {
		t.keep(t.with.clock.now)
		return err
	}
	t.ahead = readAhead{from: from, events: es, ok: true}
	return nil
}

// release lets the turn's lease go; after a turn that ended well, reading
// with it what the look after it wants (letGo), in one call of a driver
// that can (store.LeaseReader).
func (t *turn) release(ctx context.Context, ended bool) error {
	from := t.since()
	if !ended || from == 0 {
		return t.c.release(ctx, t.holder)
	}
	es, err := t.c.pinned.ReleaseRead(ctx, t.holder, from)
	t.ahead = readAhead{from: from, events: es, ok: err == nil}
	return err
}
