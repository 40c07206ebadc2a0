package testwait

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestErr: a condition that comes to hold ends the wait, looked at again
// until it does; one that never holds fails past the deadline, saying
// what was waited for and how long.
func TestErr(t *testing.T) {
	looks := 0
	if err := Err(5*time.Second, "the third look", func() bool { looks++; return looks == 3 }); err != nil || looks != 3 {
		t.Fatalf("err %v after %d looks, want nil after 3", err, looks)
	}
	start := time.Now()
	err := Err(50*time.Millisecond, "what never comes", func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "waited 50ms for what never comes") {
		t.Fatalf("err %v, want it to say what it waited for", err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before its deadline", took)
	}
}

// TestFor: For fails the test with Err's words, and passes one whose
// condition holds at once without waiting.
func TestFor(t *testing.T) {
	start := time.Now()
	For(t, time.Second, "nothing", func() bool { return true })
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("a condition that holds at once took %v", took)
	}
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		For(r, 20*time.Millisecond, "what never comes", func() bool { return false })
	}()
	<-done
	if !strings.Contains(r.failed, "waited 20ms for what never comes") {
		t.Fatalf("For failed with %q", r.failed)
	}
}

// recorder is a testing.TB whose Fatal notes what it was told and ends
// the goroutine, as the testing package's does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) {
	r.failed = strings.TrimSpace(fmt.Sprintln(args...))
	runtime.Goexit()
}
