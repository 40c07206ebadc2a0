package hub

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
)

// cpuTime is this process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestFloodAfterBridgeLeft: an agent streaming chunks as fast as it can
// after the turn's bridge left is not read on for nothing: once the
// answer kept for recover is full (cut at 16 MiB, saying so) the turn is
// cancelled in the agent, and its answer kept. Before, the hub read on
// until the agent stopped, which it never did.
func TestFloodAfterBridgeLeft(t *testing.T) {
	r := newRig(t, nil, func(c *Config) { c.TurnTimeout = 10 * time.Minute })
	ctx := testCtx(t, 60*time.Second)
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	go s.prompt(ctx, "flood", nil)
	if err := s.waitChunk(ctx, "ffff"); err != nil {
		t.Fatal(err)
	}
	s.close()
	c0, w0 := cpuTime(), time.Now()
	testwait.For(t, 60*time.Second, "the turn's answer kept after its bridge left", func() bool {
		r.hub.answers.mu.Lock()
		defer r.hub.answers.mu.Unlock()
		return len(r.hub.answers.list) == 1
	})
	t.Logf("the turn ended %v after its bridge left, the hub taking %.0f%% of a core meanwhile", time.Since(w0).Round(time.Millisecond), 100*float64(cpuTime()-c0)/float64(time.Since(w0)))
	if n := len(r.agentLog("cancel ")); n != 1 {
		t.Errorf("the agent was sent %d session/cancel, want 1", n)
	}
	got, err := r.recoverAsk(ctx, contract.RecoverParams{})
	if err != nil || len(got.Answers) != 1 || !strings.HasSuffix(got.Answers[0].Text, keptCutNote) {
		t.Fatalf("recover: %d answers, %v; want the flood's, cut", len(got.Answers), err)
	}
}
