package gcs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// twoDrivers are two Drivers, each with a client of its own, on one
// fake server, both judging leases by clk.
func twoDrivers(t *testing.T, clk *clock) (*Driver, *Driver) {
	srv := newFake(t)
	a, b := openDriver(t, srv), openDriver(t, srv)
	a.Now, b.Now = clk.Now, clk.Now
	return a, b
}

// A lease contended between two Drivers: held against the other until it
// expires by the clock, then taken over; the one whose lease was taken
// can neither renew nor release it.
func TestLeaseContendedExpiry(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	a, b := twoDrivers(t, clk)

	l, err := a.Lease(ctx, "telegram:42", "a", time.Minute)
	if err != nil {
		t.Fatalf("a takes it: %v", err)
	}
	if want := clk.Now().Add(time.Minute); l.Holder != "a" || !l.Expires.Equal(want) {
		t.Fatalf("a's lease: %+v, want a until %v", l, want)
	}
	if _, err := b.Lease(ctx, "telegram:42", "b", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("b while a's holds: %v, want ErrLeaseHeld", err)
	}
	// A second before it expires, it still holds.
	clk.advance(59 * time.Second)
	if _, err := b.Lease(ctx, "telegram:42", "b", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("b a second before expiry: %v, want ErrLeaseHeld", err)
	}
	// At its expiry it is free, and b takes it over.
	clk.advance(time.Second)
	l, err = b.Lease(ctx, "telegram:42", "b", time.Minute)
	if err != nil {
		t.Fatalf("b at a's expiry: %v", err)
	}
	if l.Holder != "b" {
		t.Fatalf("b's lease: %+v", l)
	}
	if _, err := a.Lease(ctx, "telegram:42", "a", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("a renewing after b took it: %v, want ErrLeaseHeld", err)
	}
	if err := a.Release(ctx, "telegram:42", "a"); err != nil {
		t.Fatalf("a releasing what b holds: %v", err)
	}
	if _, err := a.Lease(ctx, "telegram:42", "a", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("a after its release of b's: %v, want ErrLeaseHeld", err)
	}
	// b lets it go, and a has it at once.
	if err := b.Release(ctx, "telegram:42", "b"); err != nil {
		t.Fatalf("b releases: %v", err)
	}
	if _, err := a.Lease(ctx, "telegram:42", "a", time.Minute); err != nil {
		t.Fatalf("a after b's release: %v", err)
	}
}

// Eight takers on two Drivers race for a free lease: one wins, the rest
// are told it is held. Again, once the winner's has expired.
func TestLeaseRace(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	a, b := twoDrivers(t, clk)
	const takers = 8
	for round := range 2 {
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, takers)
		)
		for i := range takers {
			d := a
			if i%2 == 1 {
				d = b
			}
			wg.Go(func() {
				<-start
				_, errs[i] = d.Lease(ctx, "default", fmt.Sprintf("taker %d", i), time.Minute)
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Fatalf("round %d: taker %d: %v, want ErrLeaseHeld", round, i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d takers won, want 1", round, winners)
		}
		clk.advance(time.Minute)
	}
}

// A lease write whose answer was lost is sent again by the client and
// refused, the generation having moved on by its own write; read again,
// the lease is the taker's, so it has it.
func TestLeaseLostAnswer(t *testing.T) {
	ctx := context.Background()
	srv := newFake(t)
	f := &faults{match: uploadOf(testPrefix + "/default/" + leaseName), fault: lostAnswer}
	d := Open(newClient(t, srv, f), testBucket, testPrefix)
	other := openDriver(t, srv)
	l, err := d.Lease(ctx, "default", "h1", time.Minute)
	if err != nil {
		t.Fatalf("lease whose answer was lost: %v", err)
	}
	if l.Holder != "h1" {
		t.Fatalf("lease: %+v", l)
	}
	if f.count() < 2 {
		t.Fatalf("the lease was written %d times, want the lost one and more", f.count())
	}
	if _, err := other.Lease(ctx, "default", "h2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("another taker: %v, want ErrLeaseHeld", err)
	}
}

// A lease is refused without a holder or a positive ttl.
func TestLeaseRefusals(t *testing.T) {
	d := openDriver(t, newFake(t))
	if _, err := d.Lease(context.Background(), "default", "", time.Minute); err == nil {
		t.Fatal("lease with no holder: no error")
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := d.Lease(context.Background(), "default", "h1", ttl); err == nil {
			t.Fatalf("lease for %v: no error", ttl)
		}
	}
}
