package storetest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// envBroken runs one of the broken stores' tests, which must fail.
const envBroken = "LNK_STORETEST_BROKEN"

// lossy acknowledges each append before it is written: it writes an
// event only two appends later, so a writer killed at any moment has
// lost an event it was told was written (the last one always, whatever
// the kill interrupts, even the write of the one before).
type lossy struct {
	*log.Driver
	pending []store.Event
}

func (l *lossy) Append(ctx context.Context, thread string, e store.Event) error {
	next, err := store.Next(ctx, l.Driver, thread)
	if err != nil {
		return err
	}
	if e.Seq != next+int64(len(l.pending)) {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, store.ErrSeqTaken)
	}
	if len(l.pending) == 2 {
		if err := l.Driver.Append(ctx, thread, l.pending[0]); err != nil {
			return err
		}
		l.pending = l.pending[1:]
	}
	l.pending = append(l.pending, e)
	return nil
}

// careless gives a lease to whoever asks.
type careless struct{ *log.Driver }

func (c careless) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	return store.Lease{Holder: holder, Expires: time.Now().Add(ttl)}, nil
}

func TestBrokenCrash(t *testing.T) {
	if os.Getenv(envBroken) != "crash" {
		t.Skip("run by TestCatchesBroken")
	}
	storetest.Crashes{Open: func(dir string) store.Conversations { return &lossy{Driver: log.Open(dir)} }, Kills: 5}.Run(t)
}

func TestBrokenContend(t *testing.T) {
	if os.Getenv(envBroken) != "contend" {
		t.Skip("run by TestCatchesBroken")
	}
	storetest.Contend(t, func(dir string) store.Conversations { return careless{log.Open(dir)} })
}

// TestCatchesBroken: Crash fails a store that acknowledges an append
// before it's written, and Contend one whose lease isn't one.
func TestCatchesBroken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tc := range []struct{ test, mode, says string }{
		{"TestBrokenCrash", "crash", "was acknowledged"},
		{"TestBrokenContend", "contend", "want ErrLeaseHeld"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+tc.test+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envBroken+"="+tc.mode)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s ran past 2 minutes:\n%s", tc.test, out.String())
		}
		if err == nil || !strings.Contains(out.String(), "--- FAIL: "+tc.test) || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%s: %v, want it failed saying %q:\n%s", tc.test, err, tc.says, out.String())
		}
	}
}
