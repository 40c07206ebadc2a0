package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// BenchmarkHoldRelease is the cost a message's answer pays to be
// held while it is sent to its caller, and let go after.
func BenchmarkHoldRelease(b *testing.B) {
	p, err := store.For(b.TempDir(), "main")
	if err != nil {
		b.Fatal(err)
	}
	f := &Answers{Paths: p}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, err := NewID("telegram:42")
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "The answer, streamed in pieces."}, false); err != nil {
			b.Fatal(err)
		}
		if err := f.release(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHoldLetGo is what a turn's answer pays to be held while it is
// sent to its caller and let go once told (Turn.Hook, End, the let-go),
// as every turn but a process's first does: into a spare, back to one.
func BenchmarkHoldLetGo(b *testing.B) {
	p, err := store.For(b.TempDir(), "main")
	if err != nil {
		b.Fatal(err)
	}
	f := &Answers{Paths: p}
	b.Cleanup(func() { f.Close() })
	ctx := context.Background()
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		seq += 2
		turn := f.Begin("telegram:42")
		hook := turn.Hook(ctx, "The answer, streamed in pieces.")
		e := store.Event{Seq: seq, Time: time.Now(), Kind: store.KindAnswer}
		hook(e, false, nil)
		hook(e, true, nil)
		done, err := turn.End(ctx, "The answer, streamed in pieces.", seq, false, false)
		if err != nil || done == nil {
			b.Fatalf("end: %v", err)
		}
		done()
	}
}
