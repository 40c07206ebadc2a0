package scheduler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/send"
)

// fakeClock is a test's clock: it moves only when the test moves it
// (Advance), running the timers then due, soonest first, each on the
// test's goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  int // timers ever armed, for the test that counts wakes
}

type fakeTimer struct {
	at    time.Time
	f     func()
	ended bool
}

func newFakeClock(now time.Time) *fakeClock { return &fakeClock{now: now} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.armed++
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.ended
		t.ended = true
		return was
	}
}

// Advance moves the clock by d, a timer at a time: each due runs at its
// own time, and those it arms run too when due before the end.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.ended && !t.at.After(end) {
				next = t
				break
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		next.ended = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// Set sets the clock to t without running any timer: the time a
// scheduler started after being down finds.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// pending are the timers armed and not ended.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.ended {
			n++
		}
	}
	return n
}

// fired is what a scheduler recorded to send: each occurrence's due time
// and when it was recorded.
type fired struct {
	mu  sync.Mutex
	due []time.Time
	at  []time.Time
}

func (f *fired) on(s *Schedule, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.due = append(f.due, s.Next)
	f.at = append(f.at, now)
}

func (f *fired) list() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.due...)
}

// openAt opens a scheduler on p's home with clock, sending to the rig r
// (none when r is nil), its occurrences told to f.
func openAt(t *testing.T, p store.Paths, clock Clock, r *harnesstest.Rig, f *fired, set Settings) *Scheduler {
	t.Helper()
	s, err := Open(Options{Paths: p, Clock: clock, Settings: func(context.Context) (Settings, error) { return set, nil }, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if f != nil {
		s.mu.Lock()
		s.onFire = f.on
		s.mu.Unlock()
	}
	if r != nil {
		s.SetTarget(send.Target{URL: r.URL, Key: r.Key, Agent: harnesstest.Agent})
	}
	return s
}

// rigPaths are the rig's agent's paths: the scheduler keeps its folder
// in the same home.
func rigPaths(t *testing.T, r *harnesstest.Rig) store.Paths { return r.Paths() }

// scheduled are thread's messages from schedules, as stored.
func scheduled(r *harnesstest.Rig, thread string) []store.Event {
	var out []store.Event
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindMessage && e.MessageID != "" {
			out = append(out, e)
		}
	}
	return out
}

// answers queues n answers of the model.
func answers(r *harnesstest.Rig, n int) {
	for range n {
		r.Model.Push(model.Response{Text: "noted"})
	}
}

// waitIdle waits until s has sent everything recorded.
func waitIdle(t *testing.T, s *Scheduler) {
	t.Helper()
	select {
	case <-s.Idle():
	case <-time.After(20 * time.Second):
		t.Fatal("the scheduler never sent what it recorded")
	}
}

var testSettings = Settings{Zone: "UTC", MaxSchedules: DefaultMaxSchedules}

// pathsIn are agent main's paths in the Link home home.
func pathsIn(t testing.TB, home string) store.Paths {
	t.Helper()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeSchedules writes n schedules into p's scheduler folder as the
// book does, but unsynced (a synced write is ~10 ms here), each once
// at next, and returns their ids.
func writeSchedules(t testing.TB, p store.Paths, n int, next time.Time) []string {
	t.Helper()
	b, err := openBook(filepath.Join(Dir(p), "schedules"))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range n {
		s := &Schedule{ID: newID(), Thread: "telegram:5", Text: "drink water", Hops: 1, At: next.UTC(), Zone: "UTC", Start: next.Add(-time.Hour).UTC(), Next: next.UTC()}
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b.file(s.ID), data, 0o600); err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	return ids
}
