//go:build unix

package fsx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// LockDir takes the lock of folder dir, waiting until it is had or ctx
// ends. It is the folder's own flock, so it needs no file of its own, and
// every process takes it through its own open folder: the store's for
// what a conversation's folder keeps that isn't an event, memory's for
// its notes.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	wait := 50 * time.Microsecond
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { d.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			d.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			d.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}
