package harness_test

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
)

// Memory goes back to the system once nothing has run for IdleFree, and
// not while a turn runs; each end of a turn arms it again, once.
func TestIdleFree(t *testing.T) {
	const after = 100 * time.Millisecond
	clock := &timers{}
	r := newRig(t, func(c *harness.Config) { c.IdleFree = after; c.AfterFunc = clock.AfterFunc })
	r.Harness.SetIdleLeast(0) // a test's heap is small: give back whatever it holds
	r.Harness.Start(testAgent)
	// Start's timer runs all along, and the harness is idle still: its
	// first sweep's end arms a release.
	r.Harness.WaitTasks()
	if n := clock.Fire(after); n != 1 {
		t.Fatalf("%d idle releases armed after the first sweep, want 1", n)
	}
	r.Model.Push(model.Response{Text: "hi"}, model.Response{Text: "hi again"})
	reached, release := r.HoldNext()
	done := make(chan error, 1)
	go func() {
		_, _, err := r.Say("telegram:1", "hello", nil)
		done <- err
	}()
	<-reached
	if n := clock.Fire(after); n != 0 {
		t.Fatalf("%d idle releases armed while a turn runs", n)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Harness.WaitTasks()
	if n := clock.Fire(after); n != 1 {
		t.Fatalf("%d idle releases armed once idle, want 1", n)
	}
	if n := r.Harness.IdleFrees(); n != 2 {
		t.Fatalf("memory given back %d times once idle, want 2", n)
	}
	if _, _, err := r.Say("telegram:1", "again", nil); err != nil {
		t.Fatal(err)
	}
	r.Harness.WaitTasks()
	if n := clock.Fire(after); n != 1 {
		t.Fatalf("%d idle releases armed after the next turn, want 1", n)
	}
	if n := clock.Fire(after); n != 0 {
		t.Fatalf("%d idle releases armed with nothing run since, want none", n)
	}
	if n := r.Harness.IdleFrees(); n != 3 {
		t.Errorf("given back %d times, want 3: once a quiet spell", n)
	}
}

// A negative IdleFree never gives memory back: no release is armed.
func TestIdleFreeNever(t *testing.T) {
	clock := &timers{}
	r := newRig(t, func(c *harness.Config) { c.IdleFree = -1; c.AfterFunc = clock.AfterFunc })
	r.Model.Push(model.Response{Text: "hi"})
	if _, _, err := r.Say("telegram:1", "hello", nil); err != nil {
		t.Fatal(err)
	}
	r.Harness.WaitTasks()
	if n := clock.Fire(-1); n != 0 {
		t.Errorf("%d releases armed with IdleFree negative", n)
	}
	if n := r.Harness.IdleFrees(); n != 0 {
		t.Errorf("given back %d times with IdleFree negative", n)
	}
}

// Below the least heap worth it, nothing is given back: a collection of
// a small heap touches more pages than it frees.
func TestIdleFreeSmallHeap(t *testing.T) {
	const after = 50 * time.Millisecond
	clock := &timers{}
	r := newRig(t, func(c *harness.Config) { c.IdleFree = after; c.AfterFunc = clock.AfterFunc })
	r.Harness.SetIdleLeast(1 << 40)
	r.Model.Push(model.Response{Text: "hi"})
	if _, _, err := r.Say("telegram:1", "hello", nil); err != nil {
		t.Fatal(err)
	}
	r.Harness.WaitTasks()
	if n := clock.Fire(after); n != 1 {
		t.Fatalf("%d releases armed, want 1", n)
	}
	if n := r.Harness.IdleFrees(); n != 0 {
		t.Errorf("given back %d times with a heap under the least", n)
	}
}
