//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// lockDir takes the lock of a conversation's folder for what it keeps that
// isn't an event (tools.json, answers.json), waiting until it is had or ctx
// ends. It is the folder's own flock, so it needs no file of its own, and
// every process takes it through its own open folder.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	d, err := fsx.Open(dir, os.O_RDONLY, 0)
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
