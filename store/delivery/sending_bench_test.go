package delivery

import (
	"context"
	"testing"

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
