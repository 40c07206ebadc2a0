package harness_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
)

// countingConvs is the log driver, counting the reads of each thread.
type countingConvs struct {
	store.Conversations
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingConvs) count(thread string) {
	c.mu.Lock()
	c.reads[thread]++
	c.mu.Unlock()
}

func (c *countingConvs) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	c.count(thread)
	return c.Conversations.Read(ctx, thread, from)
}

func (c *countingConvs) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c.count(thread)
	return store.Latest(ctx, c.Conversations, thread, n)
}

func (c *countingConvs) got(thread string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[thread]
}

// sweepRig is a rig whose log conversations are read through a
// countingConvs.
func sweepRig(t *testing.T) (*rig, *countingConvs) {
	t.Helper()
	counted := &countingConvs{reads: map[string]int{}}
	r := newRig(t, func(cfg *harness.Config) {
		cfg.Drivers = func(p store.Paths) (map[string]store.Conversations, error) {
			counted.Conversations = log.Open(p.Chats())
			return map[string]store.Conversations{log.Name: counted, compact.Name: compact.Open(p.Chats())}, nil
		}
	})
	return r, counted
}

// An answered conversation whose files haven't changed is read by the
// first sweep only; one that changed is read again.
func TestSweepSkipsUnchanged(t *testing.T) {
	r, counted := sweepRig(t)
	p, err := store.For(r.Home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	writeAnswered(t, p, "telegram:1", 40, old)
	writeAnswered(t, p, "telegram:2", 40, old)
	writeAnswered(t, p, "telegram:3", 40, time.Now()) // just changed: not trusted yet
	ctx := t.Context()
	for range 3 {
		if err := r.Harness.Sweep(ctx, testAgent); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted.got("telegram:1"); n != 1 {
		t.Fatalf("an unchanged conversation read %d times in 3 sweeps", n)
	}
	if n := counted.got("telegram:3"); n != 3 {
		t.Fatalf("a conversation changed just now read %d times in 3 sweeps", n)
	}
	// A new answer (answered still) changes the file: read again.
	if err := log.Open(p.Chats()).Append(ctx, "telegram:2", store.Event{Seq: 41, Time: time.Now().UTC(), Kind: store.KindMessage, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := log.Open(p.Chats()).Append(ctx, "telegram:2", store.Event{Seq: 42, Time: time.Now().UTC(), Kind: store.KindAnswer, Text: "y", Seen: 41}); err != nil {
		t.Fatal(err)
	}
	if err := r.Harness.Sweep(ctx, testAgent); err != nil {
		t.Fatal(err)
	}
	if n := counted.got("telegram:2"); n != 2 {
		t.Fatalf("a changed conversation read %d times, want 2", n)
	}
	if len(r.Requests("telegram:1"))+len(r.Requests("telegram:2"))+len(r.Requests("telegram:3")) != 0 {
		t.Fatal("an answered conversation was answered")
	}
}

// A message a crash left waiting, appended after a sweep remembered its
// conversation as seen, nothing waiting, is found and finished by the next sweep.
func TestSweepFindsAppendedAfterSeen(t *testing.T) {
	r, counted := sweepRig(t)
	p, err := store.For(r.Home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	const thread = "telegram:7"
	writeAnswered(t, p, thread, 40, time.Now().Add(-time.Minute))
	ctx := t.Context()
	for range 2 {
		if err := r.Harness.Sweep(ctx, testAgent); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted.got(thread); n != 1 {
		t.Fatalf("read %d times in 2 sweeps: not remembered as seen", n)
	}
	msg := store.Event{Seq: 41, Time: time.Now().UTC(), Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:15 UTC, telegram]", Text: "left waiting by a crash"}
	if err := log.Open(p.Chats()).Append(ctx, thread, msg); err != nil {
		t.Fatal(err)
	}
	r.Model.Push(model.Response{Text: "finished after the crash"})
	if err := r.Harness.Sweep(ctx, testAgent); err != nil {
		t.Fatal(err)
	}
	// Sweep returns once the turns it finished have ended.
	ev := r.Events(thread)
	if last := ev[len(ev)-1]; len(ev) <= 41 || !store.FinalAnswer(last) || last.Text != "finished after the crash" {
		t.Fatalf("the waiting message not answered when the sweep returned: %+v", last)
	}
	if n := len(r.Requests(thread)); n != 1 {
		t.Fatalf("%d model calls", n)
	}
}
