package hub

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestGateQuiet: a state method holds the gate only once quiet has
// passed since the last turn left, new turns held off meanwhile; its
// caller gone during that wait lets the gate go. One with no turn before
// it doesn't wait.
func TestGateQuiet(t *testing.T) {
	var g stateGate
	ctx := context.Background()
	release, err := g.hold(ctx, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	release() // no turn yet: nothing to wait out

	if err := g.enter(ctx); err != nil {
		t.Fatal(err)
	}
	g.leave()
	left := time.Now()
	const quiet = 300 * time.Millisecond
	release, err = g.hold(ctx, time.Second, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(left); waited < quiet {
		t.Errorf("held %s after the turn left, before its %s quiet", waited, quiet)
	}
	release()

	if err := g.enter(ctx); err != nil {
		t.Fatal(err)
	}
	g.leave()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := g.hold(cctx, time.Second, time.Hour)
		done <- err
	}()
	// A turn waits while the gate is held for the quiet...
	entered := make(chan error, 1)
	go func() { entered <- g.enter(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("hold whose caller went: %v", err)
	}
	// ...and goes in once its caller went.
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
	g.leave()
}
