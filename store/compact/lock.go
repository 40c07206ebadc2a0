package compact

import (
	"context"
	"errors"
	"os"
	"time"
)

// errLocked says another holds a lock that was asked for without waiting.
var errLocked = errors.New("locked by another")

// lock takes f's lock, shared or exclusive, waiting for it until ctx is
// done. Closing f lets it go. Writers hold it exclusive and readers
// shared, so a reader never sees a fold half done: a frame written and
// its events still in the tail.
func lock(ctx context.Context, f *os.File, exclusive bool) error {
	if ctx.Done() == nil {
		return flock(f, exclusive, true)
	}
	wait := 100 * time.Microsecond
	for {
		err := flock(f, exclusive, false)
		if !errors.Is(err, errLocked) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}
