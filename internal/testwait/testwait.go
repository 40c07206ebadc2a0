// Package testwait is the tests' one way to wait for work they can see
// only from outside (a file another process writes, a process that
// ends): a condition looked at again every few milliseconds until it
// holds, failing the test past a deadline with what it waited for. A
// test that can wait on a channel or a returned wait does that instead.
package testwait

import (
	"testing"
	"time"
)

// every is how often For looks at its condition again.
const every = 10 * time.Millisecond

// For waits until done holds, failing tb after d saying it waited that
// long for what.
func For(tb testing.TB, d time.Duration, what string, done func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s", d, what)
		}
		time.Sleep(every)
	}
}
