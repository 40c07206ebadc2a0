package log

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"golang.org/x/sys/unix"
)

// lock takes how (unix.LOCK_EX or unix.LOCK_SH) on f, the conversation's
// events.jsonl: the one lock of a conversation, whose every writer and
// reader, in any process, takes it through its own open file, so
// goroutines of one process contend as processes do. It waits until the
// lock is had or ctx ends.
func lock(ctx context.Context, f *os.File, how int) error {
	wait := 50 * time.Microsecond
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
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

// syncDir makes the names in dir durable: a new file in it, or a new
// folder.
func syncDir(dir string) error {
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
