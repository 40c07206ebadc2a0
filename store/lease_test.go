package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// TestGrant is the lease decision every driver makes: free, expired or
// one's own is taken until now+ttl; another's unexpired lease is refused.
func TestGrant(t *testing.T) {
	now := time.Date(2026, 5, 1, 9, 0, 0, 500, time.UTC)
	later := now.Add(time.Minute)
	for _, c := range []struct {
		name   string
		cur    store.Lease
		holder string
		ttl    time.Duration
		want   store.Lease
		held   bool
	}{
		{"absent", store.Lease{}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"let go", store.Lease{Expires: later}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"expired", store.Lease{Holder: "b", Expires: now.Add(-time.Nanosecond)}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"expires now", store.Lease{Holder: "b", Expires: now}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"own, renewed", store.Lease{Holder: "a", Expires: now.Add(time.Second)}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"own, expired", store.Lease{Holder: "a", Expires: now.Add(-time.Hour)}, "a", time.Minute, store.Lease{Holder: "a", Expires: later}, false},
		{"another's", store.Lease{Holder: "b", Expires: now.Add(time.Nanosecond)}, "a", time.Minute, store.Lease{Holder: "b", Expires: now.Add(time.Nanosecond)}, true},
		{"zero ttl", store.Lease{}, "a", 0, store.Lease{Holder: "a", Expires: now}, false},
		{"zero ttl, another's", store.Lease{Holder: "b", Expires: later}, "a", 0, store.Lease{Holder: "b", Expires: later}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := store.Grant(c.cur, c.holder, c.ttl, now)
			if c.held {
				if !errors.Is(err, store.ErrLeaseHeld) {
					t.Fatalf("err %v, want ErrLeaseHeld", err)
				}
				exp := c.cur.Expires.UTC().Format(time.RFC3339Nano)
				if msg := err.Error(); !strings.Contains(msg, "by "+c.cur.Holder+" until "+exp) {
					t.Errorf("err %q names neither holder %s nor expiry %s", msg, c.cur.Holder, exp)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestGrantZeroTTLTakenOver shows that a zero-ttl lease, at its
// expiry, passes to the next holder: an expired lease is anyone's.
func TestGrantZeroTTLTakenOver(t *testing.T) {
	now := time.Now() // with a monotonic reading, which a lease leaves off
	first, err := store.Grant(store.Lease{}, "a", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if first.Expires != now.Round(0) {
		t.Fatalf("zero-ttl lease expires %v, want %v with no monotonic reading", first.Expires, now.Round(0))
	}
	next, err := store.Grant(first, "b", time.Minute, now)
	if err != nil || next.Holder != "b" {
		t.Fatalf("taking a zero-ttl lease over: %+v, %v", next, err)
	}
}
