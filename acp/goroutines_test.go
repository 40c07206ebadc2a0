package acp

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// created is how many goroutines the process has started so far.
func created() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A prompt costs the server one goroutine, its turn's: nothing waits
// for a $/cancel_request that seldom comes (whenCancelled). A connection
// the client closes cleanly ends without one either: the end of the
// Conn's life doesn't close again, in a goroutine, a WebSocket the
// close handshake has closed.
func TestGoroutinesAPrompt(t *testing.T) {
	url, served := wsServer(t, newScripted(), nil, 0)
	ctx := testCtx(t)
	c := NewClient(ctx, dialWS(t, url), nil)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "link:g"); err != nil {
		t.Fatal(err)
	}
	const prompts = 20
	runtime.GC() // its workers started before the count
	before := created()
	for range prompts {
		if _, err := c.Prompt(ctx, "link:g", []Block{{Type: "text", Text: "hi"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := created() - before; n != prompts {
		t.Errorf("%d prompts started %d goroutines, want one each", prompts, n)
	}
	before = created()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if n := created() - before; n != 0 {
		t.Errorf("a clean close started %d goroutines, want none", n)
	}
}
