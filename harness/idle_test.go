package harness

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
)

// Memory goes back to the system once nothing has run for IdleFree, and
// not while a turn runs; each end of a turn arms it again.
func TestIdleFree(t *testing.T) {
	r := newRig(t, func(c *Config) { c.IdleFree = 100 * time.Millisecond })
	r.h.idle.least = 0   // a test's heap is small: give back whatever it holds
	r.h.Start(testAgent) // its timer runs all along: the harness is idle still
	r.q.Push(model.Response{Text: "hi"}, model.Response{Text: "hi again"})
	reached, release := r.holdNext()
	done := make(chan error, 1)
	go func() {
		_, _, err := r.say("telegram:1", "hello", nil)
		done <- err
	}()
	<-reached
	base := r.h.idle.frees.Load()      // Start's first sweep may have ended before
	time.Sleep(300 * time.Millisecond) // past IdleFree, with the turn running
	if n := r.h.idle.frees.Load(); n != base {
		t.Fatalf("memory given back %d times while a turn ran", n-base)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	eventually(t, "memory given back once idle", func() bool { return r.h.idle.frees.Load() == base+1 })
	if _, _, err := r.say("telegram:1", "again", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "memory given back after the next turn", func() bool { return r.h.idle.frees.Load() == base+2 })
	time.Sleep(300 * time.Millisecond)
	if n := r.h.idle.frees.Load(); n != base+2 {
		t.Errorf("given back %d times, want 2: once a quiet spell", n-base)
	}
}

// A negative IdleFree never gives memory back, and a closed harness's
// timer is stopped.
func TestIdleFreeNever(t *testing.T) {
	r := newRig(t, func(c *Config) { c.IdleFree = -1 })
	r.q.Push(model.Response{Text: "hi"})
	if _, _, err := r.say("telegram:1", "hello", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := r.h.idle.frees.Load(); n != 0 {
		t.Errorf("given back %d times with IdleFree negative", n)
	}
}

// Below the least heap worth it, nothing is given back: a collection of
// a small heap touches more pages than it frees.
func TestIdleFreeSmallHeap(t *testing.T) {
	r := newRig(t, func(c *Config) { c.IdleFree = 50 * time.Millisecond })
	r.h.idle.least = 1 << 40
	r.q.Push(model.Response{Text: "hi"})
	if _, _, err := r.say("telegram:1", "hello", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := r.h.idle.frees.Load(); n != 0 {
		t.Errorf("given back %d times with a heap under the least", n)
	}
}
