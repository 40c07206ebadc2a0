// Package testwait is the tests' one way to wait for work they can see
// only from outside (a file another process writes, a process that
// ends, a server's state): a condition looked at again every few
// milliseconds until it holds, failing past a deadline with what it
// waited for. A test that can wait on a channel or a returned wait does
// that instead.
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// every is how often a wait looks at its condition again, at most: the
// first looks come sooner (1 ms, then doubling), so what is nearly done
// is seen nearly at once.
const every = 10 * time.Millisecond

// For waits until done holds, failing tb after d saying it waited that
// long for what. It must be called from the test's own goroutine; a
// goroutine of the test waits with Err.
func For(tb testing.TB, d time.Duration, what string, done func() bool) {
	tb.Helper()
	if err := Err(d, what, done); err != nil {
		tb.Fatal(err)
	}
}

// Err waits until done holds, as For does, and returns nil then, or
// past d an error saying it waited that long for what.
func Err(d time.Duration, what string, done func() bool) error {
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; !done(); pause = min(2*pause, every) {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, what)
		}
		time.Sleep(pause)
	}
	return nil
}
