package hub

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// TestKeeperLeavesNothing: a process the agent's tool leaves behind
// (its parent, a shell, gone at once), once it exits, is reaped, no
// zombie left; and a process the agent started in a session of its own,
// ignoring SIGTERM, is ended with the harness when the hub closes. Both
// outlived the hub's reaping of the harness's group alone.
func TestKeeperLeavesNothing(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 30*time.Second)
	if got := r.message(ctx, "telegram:1", "orphan-exit", nil).must(t); got != "left one" {
		t.Fatalf("answered %q", got)
	}
	left := loggedPid(t, r, "left ")
	testwait.For(t, 30*time.Second, "the process the harness left to end", func() bool { return gone(left) })
	if got := r.message(ctx, "telegram:1", "escape", nil).must(t); got != "escaped" {
		t.Fatalf("answered %q", got)
	}
	escapee := loggedPid(t, r, "escapee ")
	if gone(escapee) {
		t.Fatal("the escapee never ran")
	}
	r.close()
	testwait.For(t, 30*time.Second, "the escapee to end", func() bool { return gone(escapee) })
	if z := zombies(); z != 0 {
		t.Errorf("%d zombie children left", z)
	}
}

// loggedPid is the process id the agent logged last after prefix.
func loggedPid(t *testing.T, r *rig, prefix string) int {
	t.Helper()
	l := r.agentLog(prefix)
	if len(l) == 0 {
		t.Fatalf("the agent logged no %q", prefix)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(l[len(l)-1], prefix))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone says no process pid is left, not even a zombie.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err != nil
}
