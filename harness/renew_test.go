package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// A turn longer than its lease's time keeps the lease, renewed every
// third of it, so no other process takes the conversation meanwhile; the
// lease goes with the turn's end, and no renewal takes it back after.
func TestLeaseRenewed(t *testing.T) {
	const ttl = 1500 * time.Millisecond // renewed every 500 ms: a late timer needs a second to fail it
	r := newRig(t, func(c *Config) { c.LeaseTTL = ttl })
	r.q.Push(model.Response{Text: "took a while"})
	p, err := store.For(r.home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	other := log.Open(p.Chats())
	ctx := context.Background()
	reached, release := r.holdNext()
	defer release()
	done, _ := r.promptAsync("telegram:3", "slow, please")
	<-reached
	for range 3 {
		time.Sleep(ttl * 2 / 3)
		if _, err := other.Lease(ctx, "telegram:3", "another-process", ttl); !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("another process took the lease of a turn running past its time: %v", err)
		}
	}
	release()
	if res := <-done; res.err != nil {
		t.Fatal(res.err)
	}
	time.Sleep(ttl) // a renewal that ran on would take it back by now
	if _, err := other.Lease(ctx, "telegram:3", "another-process", ttl); err != nil {
		t.Fatalf("the lease after the turn: %v", err)
	}
}
