package log

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockHow is the kind of lock taken on a conversation's events.jsonl.
type lockHow int

const (
	// shared is a reader's lock: many hold it at once.
	shared lockHow = iota
	// exclusive is a writer's lock: one holds it, and no reader.
	exclusive
)

// lock takes how on f, the conversation's events.jsonl: the one lock of a
// conversation, whose every writer and reader, in any process, takes it
// through its own open file, so goroutines of one process contend as
// processes do. It waits until the lock is had or ctx ends; closing f
// lets it go.
func lock(ctx context.Context, f *os.File, how lockHow) error {
	wait := 50 * time.Microsecond
	for {
		got, err := tryLock(f, how)
		if err != nil {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if got {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("lock %s: %w", f.Name(), ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}
