package delivery

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// A recover that lists the answers sending as a turn lets its hold go
// (its caller told the answer: the prompt's response written) hands that
// answer over no more: whether a hold's turn still sends it is asked
// before the hold is read, so a let-go between the read and the question
// can't make a delivered answer look like one whose turn is gone. Before,
// the hold read was adopted and handed over too: one answer twice. A
// let-go before the read leaves nothing to read.
func TestRecoverAsHoldGoes(t *testing.T) {
	for _, when := range []string{"after its read", "before its read"} {
		t.Run(when, func(t *testing.T) {
			ctx := context.Background()
			p, err := store.For(t.TempDir(), "main")
			if err != nil {
				t.Fatal(err)
			}
			a := &Answers{Paths: p}
			const thread, text = "telegram:42", "told its caller"
			turn := a.Begin(thread)
			hook := turn.Hook(ctx, text)
			e := store.Event{Seq: 2, Time: time.Now().UTC()}
			hook(e, false, nil)
			hook(e, true, nil)
			delivered, err := turn.End(ctx, text, e.Seq, false, false)
			if err != nil || delivered == nil {
				t.Fatalf("end: %v (delivered %v)", err, delivered != nil)
			}
			var once sync.Once
			called := false
			goes := func() { // the response written as the recover reads
				called = true
				once.Do(delivered)
			}
			if when == "after its read" {
				a.read = goes
			} else {
				goes()
				called = false
			}
			got, err := a.HandOver(ctx, false, nil)
			if err != nil || len(got) != 0 {
				t.Fatalf("handed over %+v, %v: want nothing, the answer its caller was told", got, err)
			}
			if when == "after its read" && !called {
				t.Fatal("the recover listed no answer sending")
			}
			if got, err := a.HandOver(ctx, true, nil); err != nil || len(got) != 0 {
				t.Fatalf("handed over later %+v, %v", got, err)
			}
		})
	}
}
