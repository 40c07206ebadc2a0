package fsx

import (
	"context"
	"fmt"
	"time"
)

// Lock takes f's lock, exclusive (a writer's: one holds it, and no
// reader) or shared (a reader's: many at once), waiting until it is had
// or ctx ends. The lock is the open file's, so goroutines of one process,
// each through its own open file, contend as processes do; closing f lets
// it go.
func Lock(ctx context.Context, f Handle, exclusive bool) error {
	if ctx.Done() == nil {
		if _, err := lock(f, exclusive, true); err != nil {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		return nil
	}
	wait := 50 * time.Microsecond
	for {
		got, err := lock(f, exclusive, false)
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

// lock takes f's lock (lockFile) on its descriptor.
func lock(f Handle, exclusive, wait bool) (bool, error) {
	if fd, ok := descriptor(f); ok {
		return lockFile(fd, exclusive, wait)
	}
	return lockConn(f, exclusive, wait)
}

// lockConn is lock through f's RawConn: apart, so the results its
// closure sets are made on the heap only on this way.
func lockConn(f Handle, exclusive, wait bool) (got bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	if cerr := rc.Control(func(fd uintptr) { got, err = lockFile(fd, exclusive, wait) }); cerr != nil {
		return false, cerr
	}
	return got, err
}
