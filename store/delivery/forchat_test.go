package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// heldForChat runs a turn of link:notes that lnk agent chat send's
// message joined, its caller still there, to its End: the answer is held
// for the caller and kept for the chat. delivered is never called, as
// when the response's write failed or the process was killed first.
func heldForChat(t *testing.T, f *Answers) (sent time.Time) {
	t.Helper()
	ctx := context.Background()
	sent = f.now()
	turn := f.Begin("link:notes")
	hook := turn.Hook(ctx, "the list is long")
	ev := store.Event{Seq: 3, Time: f.now()}
	hook(ev, false, nil)
	hook(ev, true, nil)
	delivered, err := turn.End(ctx, "the list is long", 3, false, true)
	if err != nil || delivered == nil {
		t.Fatalf("end: %v, delivered %v", err, delivered != nil)
	}
	return sent
}

// An answer kept for lnk agent chat is never handed over by a
// single-phase recover, whatever became of its caller's hold: not by the
// next process (the first killed before its caller had the response),
// nor by this one once the grace after its turn has passed (the
// response's write failed, or its let-go came late). It is kept once, for
// the chat's message, which takes it.
func TestHeldForChatNeverHandedOver(t *testing.T) {
	ctx := context.Background()
	for _, next := range []string{"process", "grace"} {
		t.Run(next, func(t *testing.T) {
			p, err := store.For(t.TempDir(), "main")
			if err != nil {
				t.Fatal(err)
			}
			var ahead time.Duration
			f := &Answers{Paths: p, Now: func() time.Time { return time.Now().Add(ahead) }}
			sent := heldForChat(t, f)
			if next == "process" {
				f = &Answers{Paths: p}
			} else {
				ahead = Grace + time.Second
			}
			if got, err := f.HandOver(ctx, false, nil); err != nil || len(got) != 0 {
				t.Fatalf("a single-phase recover took %+v, %v", got, err)
			}
			all, err := f.Pending(ctx)
			if err != nil || len(all) != 1 || !all[0].ForChat || all[0].Seq != 3 {
				t.Fatalf("pending %+v, %v: want the one kept for the chat", all, err)
			}
			k, ok, err := f.TakeAfter(ctx, "link:notes", sent)
			if err != nil || !ok || k.Text != "the list is long" {
				t.Fatalf("kept for the message: %+v, %v, %v", k, ok, err)
			}
			if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
				t.Fatalf("still pending %+v, %v", all, err)
			}
		})
	}
}

// A hold whose answer is pending already under another id (its caller
// gone, a kill between the keep and the hold's let-go) is adopted as
// that one: handed over once, not twice.
func TestAdoptKeptOnce(t *testing.T) {
	ctx := context.Background()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	id, _ := NewID("telegram:7")
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:7", Text: "once", Seq: 5, EventTime: time.Now()}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Keep(ctx, "telegram:7", "once", time.Time{}, 5); err != nil {
		t.Fatal(err)
	}
	got, err := f.HandOver(ctx, false, nil)
	if err != nil || len(got) != 1 || got[0].Text != "once" {
		t.Fatalf("handed over %+v, %v: want it once", got, err)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Fatalf("still pending %+v, %v", all, err)
	}
}
