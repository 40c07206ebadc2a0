package hub

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// TestIdleSessionClosed: a session no turn has used for IdleClose is
// closed in a harness that offers session/close, and the thread's next
// message takes it up again (session/resume), the conversation going on;
// a session whose turn runs is never closed, however long it runs.
func TestIdleSessionClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	r := newRig(t, []string{envCaps + "=resume,load,close"}, func(c *Config) { c.IdleClose = idle })
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.message(ctx, "telegram:2", "two", nil).must(t)
	first, second := r.hub.sessions.get("telegram:1"), r.hub.sessions.get("telegram:2")
	busy, err := r.open(ctx, "telegram:2")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.close()
	answered := make(chan *exchange, 1)
	go func() { answered <- busy.prompt(ctx, "wait", nil) }()
	if err := busy.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	testwait.For(t, 30*time.Second, "the idle session closed", func() bool { return slices.Contains(r.agentLog("close "), "close "+first) })
	t.Logf("the idle session was closed %v after the busy turn began", time.Since(began).Round(time.Millisecond))
	if slices.Contains(r.agentLog("close "), "close "+second) {
		t.Error("the session of a running turn was closed")
	}
	busy.c.Cancel(ctx, "telegram:2")
	<-answered
	got := r.message(ctx, "telegram:1", "history", nil).must(t)
	if got != `history: "one"` {
		t.Errorf("after its session was closed the thread's history is %q, want its own", got)
	}
	if resumed := r.agentLog("resume "); !slices.Contains(resumed, "resume "+first) {
		t.Errorf("the closed session was not taken up again: %q", resumed)
	}
	if strings.Contains(got, resetNote) || r.hub.sessions.get("telegram:1") != first {
		t.Error("the thread was started anew")
	}
}
