package harness_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// leaseCounter is a driver that counts the leases taken or renewed
// through it.
type leaseCounter struct {
	store.Conversations
	n atomic.Int32
}

// Close closes the driver counted, as the harness closes its drivers at
// its end, so the folder the log makes ahead is done before the test's
// folder is removed.
func (l *leaseCounter) Close() error {
	if c, ok := l.Conversations.(store.Closer); ok {
		return c.Close()
	}
	return nil
}

func (l *leaseCounter) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l.n.Add(1)
	return l.Conversations.Lease(ctx, thread, holder, ttl)
}

// A turn longer than its lease's time renews the lease every third of it
// while it runs, so no other process takes the conversation meanwhile;
// the renewal stops with the turn, and none takes the lease back after.
func TestLeaseRenewed(t *testing.T) {
	const ttl = 3 * time.Second
	clock := &timers{}
	counter := &leaseCounter{}
	r := newRig(t, func(c *harness.Config) {
		c.LeaseTTL = ttl
		c.AfterFunc = clock.AfterFunc
		c.Drivers = func(p store.Paths) (map[string]store.Conversations, error) {
			d, err := testDrivers(p)
			counter.Conversations = d[log.Name]
			d[log.Name] = counter
			return d, err
		}
	})
	r.Model.Push(model.Response{Text: "took a while"})
	reached, release := r.HoldNext()
	defer release()
	done, _ := r.promptAsync("telegram:3", "slow, please")
	<-reached
	for i := range 3 {
		before := counter.n.Load()
		if n := clock.Fire(ttl / 3); n != 1 {
			t.Fatalf("renewal %d: %d timers of a third of the lease armed, want 1", i, n)
		}
		if got := counter.n.Load() - before; got != 1 {
			t.Fatalf("renewal %d: the lease taken %d times, want once", i, got)
		}
	}
	release()
	if res := <-done; res.err != nil {
		t.Fatal(res.err)
	}
	before := counter.n.Load()
	if n := clock.Fire(ttl / 3); n != 0 {
		t.Fatalf("%d renewals armed after the turn", n)
	}
	if got := counter.n.Load(); got != before {
		t.Fatalf("the lease taken %d times after the turn", got-before)
	}
}
