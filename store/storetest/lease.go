package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
)

// leaseTTL is long enough that a lease taken is still held when the next
// call of the test comes, however slow the machine, and expiry is tested
// with shortTTL and a bounded wait.
const (
	leaseTTL = time.Minute
	shortTTL = 150 * time.Millisecond
)

// lease takes or renews thread's lease for holder, failing t on an error.
func lease(t *testing.T, c store.Conversations, thread, holder string, ttl time.Duration) store.Lease {
	t.Helper()
	before := time.Now()
	l, err := c.Lease(context.Background(), thread, holder, ttl)
	if err != nil {
		t.Fatalf("lease %s for %s: %v", thread, holder, err)
	}
	if l.Holder != holder {
		t.Fatalf("lease %s for %s: held by %q", thread, holder, l.Holder)
	}
	// A driver's clock may be a little off ours; a second either way is
	// still the lease asked for.
	if l.Expires.Before(before.Add(ttl-time.Second)) || l.Expires.After(time.Now().Add(ttl+time.Second)) {
		t.Fatalf("lease %s for %s for %v: expires %v, %v from now", thread, holder, ttl, l.Expires, time.Until(l.Expires))
	}
	return l
}

// held fails t unless thread's lease is held against holder.
func held(t *testing.T, c store.Conversations, thread, holder string) {
	t.Helper()
	_, err := c.Lease(context.Background(), thread, holder, leaseTTL)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease %s for %s: %v, want ErrLeaseHeld", thread, holder, err)
	}
}

func testLease(t *testing.T, c store.Conversations) {
	// A lease needs no event before it.
	first := lease(t, c, "telegram:42", "h1", leaseTTL)
	held(t, c, "telegram:42", "h2")
	// Renewed by its holder, it lasts longer, once the clock has moved.
	var renewed store.Lease
	if err := testwait.Err(5*time.Second, "a renewal to last longer", func() bool {
		renewed = lease(t, c, "telegram:42", "h1", leaseTTL)
		return renewed.Expires.After(first.Expires)
	}); err != nil {
		t.Fatalf("%v: renewed lease expires %v, not after %v", err, renewed.Expires, first.Expires)
	}
	held(t, c, "telegram:42", "h2")
	// Each conversation has its own.
	lease(t, c, "default", "h2", leaseTTL)
	held(t, c, "default", "h1")
	// A lease is not an event.
	appendAll(t, c, "telegram:42", Events(2, "a"))
	Same(t, "events beside a lease", read(t, c, "telegram:42", 1), Events(2, "a"))
	held(t, c, "telegram:42", "h2")
}

func testLeaseExpiry(t *testing.T, c store.Conversations) {
	lease(t, c, "default", "h1", shortTTL)
	held(t, c, "default", "h2")
	// Taken over once expired: tried until a bounded time after expiry.
	testwait.For(t, shortTTL+5*time.Second, "h1's lease to expire, taken by h2", func() bool {
		_, err := c.Lease(context.Background(), "default", "h2", leaseTTL)
		if err != nil && !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("lease for h2 after h1's expired: %v", err)
		}
		return err == nil
	})
	held(t, c, "default", "h1")
	// The one whose lease expired and was taken no longer has it: its
	// release leaves h2's.
	if err := c.Release(context.Background(), "default", "h1"); err != nil {
		t.Fatalf("release by a holder whose lease was taken: %v", err)
	}
	held(t, c, "default", "h1")
}

func testRelease(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	// Releasing what nobody holds is no error.
	if err := c.Release(ctx, "default", "h1"); err != nil {
		t.Fatalf("release of no lease: %v", err)
	}
	lease(t, c, "default", "h1", leaseTTL)
	// A release by another leaves the lease.
	if err := c.Release(ctx, "default", "h2"); err != nil {
		t.Fatalf("release by a non-holder: %v", err)
	}
	held(t, c, "default", "h2")
	// Released, another takes it at once.
	if err := c.Release(ctx, "default", "h1"); err != nil {
		t.Fatalf("release by its holder: %v", err)
	}
	lease(t, c, "default", "h2", leaseTTL)
	held(t, c, "default", "h1")
	// Released twice is no error.
	if err := c.Release(ctx, "default", "h2"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := c.Release(ctx, "default", "h2"); err != nil {
		t.Fatalf("release again: %v", err)
	}
	lease(t, c, "default", "h1", leaseTTL)
}

// testLeaseRead: store.LeaseRead and store.ReleaseRead (one call of a
// driver's LeaseReader, else the two calls each stands for) take the
// lease and read under it, and let it go and read: the events from the
// number asked, none past the last; a lease another holds is refused
// with nothing read; a conversation not begun reads as none either way.
func testLeaseRead(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	const thread = "telegram:42"
	es := Events(6, "a")
	appendAll(t, c, thread, es[:5])
	l, got, err := store.LeaseRead(ctx, c, thread, "h1", leaseTTL, 3)
	if err != nil || l.Holder != "h1" {
		t.Fatalf("lease and read for h1: %+v, %v", l, err)
	}
	Same(t, "lease and read from 3", got, es[2:5])
	held(t, c, thread, "h2")
	_, got, err = store.LeaseRead(ctx, c, thread, "h2", leaseTTL, 1)
	if !errors.Is(err, store.ErrLeaseHeld) || got != nil {
		t.Fatalf("lease and read for h2 while h1 holds it: %d events, %v; want none, ErrLeaseHeld", len(got), err)
	}
	if _, got, err = store.LeaseRead(ctx, c, thread, "h1", leaseTTL, 6); err != nil || len(got) != 0 {
		t.Fatalf("renew and read past the last: %d events, %v; want none", len(got), err)
	}
	appendAll(t, c, thread, es[5:])
	got, err = store.ReleaseRead(ctx, c, thread, "h1", 6)
	if err != nil {
		t.Fatalf("release and read: %v", err)
	}
	Same(t, "release and read from 6", got, es[5:])
	lease(t, c, thread, "h2", leaseTTL)
	if got, err = store.ReleaseRead(ctx, c, thread, "h2", 7); err != nil || len(got) != 0 {
		t.Fatalf("release and read past the last: %d events, %v; want none", len(got), err)
	}
	lease(t, c, thread, "h1", leaseTTL)
	if got, err = store.ReleaseRead(ctx, c, "telegram:43", "h1", 1); err != nil || len(got) != 0 {
		t.Fatalf("release and read of a conversation not begun: %d events, %v", len(got), err)
	}
	if _, got, err = store.LeaseRead(ctx, c, "telegram:43", "h1", leaseTTL, 1); err != nil || len(got) != 0 {
		t.Fatalf("lease and read of a conversation not begun: %d events, %v", len(got), err)
	}
	held(t, c, "telegram:43", "h2")
}
