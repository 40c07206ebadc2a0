package bridge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// Forget through the bridge lets the served driver (gcs's) forget a
// thread's events and lease, leaving others'; a served driver that can't
// forget (log's) answers errors.ErrUnsupported.
func TestForgetThroughBridge(t *testing.T) {
	ctx := context.Background()
	c := serveStore(t, gcsServer(t)())
	for _, th := range []string{"telegram:1", "telegram:2"} {
		if err := c.Append(ctx, th, store.Event{Seq: 1, Kind: store.KindMessage, Text: "hi " + th, Time: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Lease(ctx, "telegram:1", "turn-a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Forget(ctx, "telegram:1"); err != nil {
		t.Fatalf("forget: %v", err)
	}
	if got, err := c.Read(ctx, "telegram:1", 1); err != nil || len(got) != 0 {
		t.Fatalf("a forgotten thread reads %d events (%v), want none", len(got), err)
	}
	if _, err := c.Lease(ctx, "telegram:1", "turn-b", time.Hour); err != nil {
		t.Fatalf("a forgotten thread's lease is still held: %v", err)
	}
	if got, err := c.Read(ctx, "telegram:2", 1); err != nil || len(got) != 1 {
		t.Fatalf("another thread reads %d events (%v) after a forget, want 1", len(got), err)
	}
	if err := c.Forget(ctx, "telegram:9"); err != nil {
		t.Fatalf("forget a thread it keeps nothing of: %v", err)
	}

	s := serve(t, "unix")
	if err := s.client.Forget(ctx, "default"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("forget through log's bridge: %v, want errors.ErrUnsupported", err)
	}
}
