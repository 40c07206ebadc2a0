package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// stateGate keeps agent state's methods between turns: a turn enters it
// as it begins and leaves as it ends; an export or import holds it, once
// the turns running have left, and new turns wait until it lets go.
type stateGate struct {
	mu      sync.Mutex
	turns   int
	held    bool          // a state method holds it, or waits for the turns
	left    time.Time     // when a turn last left
	changed chan struct{} // closed, and made anew, at each change
}

// wake tells the waiters something changed; g.mu is held.
func (g *stateGate) wake() {
	if g.changed != nil {
		close(g.changed)
	}
	g.changed = make(chan struct{})
}

// watch is the channel closed at the next change; g.mu is held.
func (g *stateGate) watch() chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

// enter lets a turn begin once no state method holds the gate.
func (g *stateGate) enter(ctx context.Context) error {
	for {
		g.mu.Lock()
		if !g.held {
			g.turns++
			g.mu.Unlock()
			return nil
		}
		ch := g.watch()
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leave is a turn's end.
func (g *stateGate) leave() {
	g.mu.Lock()
	g.turns--
	g.left = time.Now()
	g.wake()
	g.mu.Unlock()
}

// errTurnsRun refuses a state method while a turn still runs after the
// wait.
type errTurnsRun struct{ waited time.Duration }

func (e errTurnsRun) Error() string {
	return fmt.Sprintf("agent state is exported and imported only between turns: a turn still ran after %s", e.waited)
}

// hold takes the gate for a state method: it waits for another's to end
// and for the running turns to end, up to wait, holding new turns off
// meanwhile; then it is refused. Once they have, it waits until quiet
// has passed since the last turn left, new turns still held off, so a
// harness's writes after its answer are done. release lets the gate go.
func (g *stateGate) hold(ctx context.Context, wait, quiet time.Duration) (release func(), err error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	mine := false
	for {
		g.mu.Lock()
		if !mine && !g.held {
			g.held, mine = true, true
			g.wake()
		}
		if mine && g.turns == 0 {
			left := g.left
			g.mu.Unlock()
			release := func() {
				g.mu.Lock()
				g.held = false
				g.wake()
				g.mu.Unlock()
			}
			if d := quiet - time.Since(left); !left.IsZero() && d > 0 {
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
				case <-ctx.Done():
					release()
					return nil, ctx.Err()
				}
			}
			return release, nil
		}
		ch := g.watch()
		g.mu.Unlock()
		var err error
		select {
		case <-ch:
			continue
		case <-timer.C:
			err = errTurnsRun{wait}
		case <-ctx.Done():
			err = ctx.Err()
		}
		if mine {
			g.mu.Lock()
			g.held = false
			g.wake()
			g.mu.Unlock()
		}
		return nil, err
	}
}
