package harness

import (
	"runtime"
	"testing"
)

// A conversation's appends are one at a time in this process; another
// conversation's never wait for them; and a lock no append holds or
// waits for is let go.
func TestConvLocks(t *testing.T) {
	var l convLocks
	unlock := l.lock("a", "x")
	other := make(chan struct{})
	go func() {
		u := l.lock("a", "y")
		close(other)
		u()
	}()
	<-other // taken while x's is held
	second := make(chan func())
	go func() { second <- l.lock("a", "x") }()
	for users := 0; users < 2; runtime.Gosched() {
		l.mu.Lock()
		users = l.m[histKey{"a", "x"}].users
		l.mu.Unlock()
	}
	select {
	case <-second:
		t.Fatal("x's lock taken twice at once")
	default:
	}
	unlock()
	(<-second)()
	if len(l.m) != 0 {
		t.Fatalf("%d locks kept with no append", len(l.m))
	}
}
