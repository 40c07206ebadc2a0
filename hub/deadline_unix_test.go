//go:build unix

package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
)

// TestTurnDeadline: a turn past its deadline is cancelled in the
// harness; one that ends then is answered cancelled, saying why, the
// harness running on. One that never ends holds its thread no longer:
// past the grace it fails saying so, the harness's whole group is
// stopped, and the thread's next message, waiting meanwhile, is told
// taken and answered, its session taken up again.
func TestTurnDeadline(t *testing.T) {
	const deadline, grace = 400 * time.Millisecond, 300 * time.Millisecond
	r := newRig(t, []string{envCaps + "=resume"}, func(c *Config) { c.TurnTimeout, c.CancelGrace = deadline, grace })
	ctx := testCtx(t, 60*time.Second)

	e := r.message(ctx, "telegram:1", "wait", nil)
	var res acp.PromptResult
	json.Unmarshal(e.result, &res)
	if got := e.must(t); got != "waitingpermission cancelled"+fmt.Sprintf(overdueNote, deadline) || res.StopReason != acp.StopCancelled {
		t.Errorf("a turn past its deadline that ends when cancelled was answered %q, %s; want cancelled, saying why", got, e.result)
	}
	if n := len(r.agentLog("cancel ")); n != 1 {
		t.Errorf("the harness was sent %d session/cancel, want 1", n)
	}

	hung, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.close()
	ended := make(chan *exchange, 1)
	start := time.Now()
	go func() { ended <- hung.prompt(ctx, "hang", nil) }()
	if err := hung.waitChunk(ctx, "hanging"); err != nil {
		t.Fatal(err)
	}
	pgid := lastGroup(r)
	next, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer next.close()
	answered := make(chan *exchange, 1)
	go func() { answered <- next.prompt(ctx, "history", nil) }()
	e = <-ended
	took := time.Since(start)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || !strings.Contains(rpcErr.Message, "passed its deadline") {
		t.Fatalf("a turn that never ends was answered %v, want an error saying it passed its deadline", e.err)
	}
	t.Logf("the hung turn failed %v after it began (deadline %v, grace %v)", took, deadline, grace)
	e = <-answered
	if got := e.must(t); got != `history: "wait" | "hang"` {
		t.Errorf("the thread's next message was answered %q, want its session's history", got)
	}
	taken := false
	for _, n := range e.notes {
		taken = taken || n.method == contract.MethodTaken
	}
	if !taken {
		t.Error("the thread's next message was never told taken")
	}
	testwait.For(t, 60*time.Second, "the harness's process group to end", func() bool { return syscall.Kill(-pgid, 0) != nil })
	if n := len(r.agentLog("initialize")); n != 2 {
		t.Errorf("the harness started %d times, want twice (stopped once)", n)
	}
}

// lastGroup is the process group of the agent last started.
func lastGroup(r *rig) int {
	l := r.agentLog("pgid ")
	var n int
	if len(l) > 0 {
		fmt.Sscanf(l[len(l)-1], "pgid %d", &n)
	}
	return n
}
