// Package store is the seam through which Link Harness keeps everything of
// an agent's: its settings, its instructions and files, and its
// conversations, each an append-only log of events.
//
// A driver does three things only: append an event if its number is free
// and the next, read from a number, and hold the lease that says a turn
// runs. This package is that contract (Conversations, its optional
// capabilities, Event, Lease and Grant, and the errors a caller branches
// on), an agent's paths (Paths) and its own files (Files). Everything
// else is built on those in packages of its own: the registry of drivers
// and which one keeps a folder (store/driver), the router that reaches
// each conversation through its driver (store/router), what a
// conversation's folder keeps beside its events (store/folder), the copy
// for people (store/transcript), an answer's delivery (store/delivery),
// fork and convert (store/fork, store/convert).
package store

import (
	"context"
	"errors"
	"time"
)

// Errors a driver returns, tested with errors.Is.
var (
	// ErrSeqTaken: the event's number is already written, or is not the next.
	ErrSeqTaken = errors.New("sequence number taken or not next")
	// ErrLeaseHeld: another holder's lease has not expired.
	ErrLeaseHeld = errors.New("lease held")
	// ErrCorrupt: stored bytes don't read as events; the error names the file and place.
	ErrCorrupt = errors.New("corrupt")
)

// Conversations is the seam every driver implements: one agent's
// conversations, each an append-only list of numbered events under its
// thread id (telegram:42), and the lease a turn takes to run in one. The
// driver chooses where they are kept.
type Conversations interface {
	// Append writes e as event e.Seq of thread if that number is free and
	// the next (1 for the first); ErrSeqTaken otherwise. Once Append
	// returns nil the event is durable.
	Append(ctx context.Context, thread string, e Event) error
	// Read returns the thread's events numbered from and after, in order.
	// A thread with no events reads as none.
	Read(ctx context.Context, thread string, from int64) ([]Event, error)
	// Lease takes the lease that says a turn runs, or renews it for the
	// holder that has it, until now+ttl. A lease held by another holder and
	// not yet expired gives ErrLeaseHeld.
	Lease(ctx context.Context, thread, holder string, ttl time.Duration) (Lease, error)
	// Release lets the holder's lease go; it is not an error if the holder
	// no longer has it.
	Release(ctx context.Context, thread, holder string) error
}

// Lease says who runs a turn in a conversation, and until when.
type Lease struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// LatestReader is the optional capability of reading a conversation's
// latest events without reading all of it.
type LatestReader interface {
	// Latest returns the thread's last n events, in order.
	Latest(ctx context.Context, thread string, n int) ([]Event, error)
}

// LeaseReader is the optional capability of a driver that takes a turn's
// lease and reads the events it needs in one call, and lets the lease go
// and reads once more in one: a driver whose every call opens its
// conversation's file (the log) opens it once for both. A driver that
// wraps another and changes its Lease, Release or Read changes these too.
type LeaseReader interface {
	// LeaseRead is Lease and then, with the lease held, Read from from:
	// the events as they were when it was taken. A lease another holds is
	// ErrLeaseHeld, and nothing is read; a read that fails lets the lease
	// go again: the call takes nothing.
	LeaseRead(ctx context.Context, thread, holder string, ttl time.Duration, from int64) (Lease, []Event, error)
	// ReleaseRead is Release and then Read from from: the events as they
	// were when the lease went.
	ReleaseRead(ctx context.Context, thread, holder string, from int64) ([]Event, error)
}

// LeaseRead takes the thread's lease for holder and reads its events from
// from under it: in one call of the driver's LeaseReader when it has one,
// else Lease, then Read.
func LeaseRead(ctx context.Context, c Conversations, thread, holder string, ttl time.Duration, from int64) (Lease, []Event, error) {
	if lr, ok := c.(LeaseReader); ok {
		return lr.LeaseRead(ctx, thread, holder, ttl, from)
	}
	l, err := c.Lease(ctx, thread, holder, ttl)
	if err != nil {
		return l, nil, err
	}
	es, err := c.Read(ctx, thread, from)
	if err != nil {
		return Lease{}, nil, errors.Join(err, c.Release(context.WithoutCancel(ctx), thread, holder))
	}
	return l, es, nil
}

// ReleaseRead lets holder's lease of the thread go and reads its events
// from from: in one call of the driver's LeaseReader when it has one,
// else Release, then Read.
func ReleaseRead(ctx context.Context, c Conversations, thread, holder string, from int64) ([]Event, error) {
	if lr, ok := c.(LeaseReader); ok {
		return lr.ReleaseRead(ctx, thread, holder, from)
	}
	if err := c.Release(ctx, thread, holder); err != nil {
		return nil, err
	}
	return c.Read(ctx, thread, from)
}

// Closer is the optional capability of a driver that holds files or
// connections, to let them go.
type Closer interface {
	Close() error
}

// Latest reads the thread's last n events, with the driver's LatestReader
// when it has one.
func Latest(ctx context.Context, c Conversations, thread string, n int) ([]Event, error) {
	if lr, ok := c.(LatestReader); ok {
		return lr.Latest(ctx, thread, n)
	}
	all, err := c.Read(ctx, thread, 1)
	if err != nil {
		return nil, err
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all, nil
}

// Next is the number the thread's next event takes.
func Next(ctx context.Context, c Conversations, thread string) (int64, error) {
	last, err := Latest(ctx, c, thread, 1)
	if err != nil {
		return 0, err
	}
	if len(last) == 0 {
		return 1, nil
	}
	return last[0].Seq + 1, nil
}
