package hub

import (
	"fmt"
	"sync"
	"time"
)

// overdueNote ends the answer of a turn that passed its deadline and
// ended once cancelled: %s is the deadline.
const overdueNote = "\n\n[The agent's turn passed its deadline of %s and was cancelled.]"

// deadline bounds t's turn in h by TurnTimeout: past it the harness is
// sent session/cancel for it, and past CancelGrace more, the turn fails
// saying so and the harness's whole process group is stopped (its
// other turns fail as at a crash; the next message starts it again).
// stop ends the watch when the turn ends, and says whether it was
// overdue.
func (hb *Hub) deadline(h *harness, t *turn) (stop func() (overdue bool)) {
	var (
		mu      sync.Mutex
		overdue bool
		grace   *time.Timer
	)
	timer := time.AfterFunc(hb.cfg.TurnTimeout, func() {
		mu.Lock()
		overdue = true
		grace = time.AfterFunc(hb.cfg.CancelGrace, func() {
			hb.cfg.Logger.Warn("a turn cancelled past its deadline did not end: the harness is stopped", "thread", t.thread, "grace", hb.cfg.CancelGrace)
			t.fail(errOverdue{hb.cfg.TurnTimeout})
			h.shutdown()
		})
		mu.Unlock()
		hb.cfg.Logger.Warn("a turn passed its deadline: cancelled", "thread", t.thread, "deadline", hb.cfg.TurnTimeout)
		t.cancel() // a write to a harness not reading may wait: the grace runs
	})
	return func() bool {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		if grace != nil {
			grace.Stop()
		}
		return overdue
	}
}

// errOverdue fails a turn past its deadline that did not end when
// cancelled: its harness is stopped, and the turn's end waits for that,
// so the thread's next message starts another.
type errOverdue struct{ deadline time.Duration }

func (e errOverdue) Error() string {
	return fmt.Sprintf("the agent's turn passed its deadline of %s and did not end when cancelled; the agent was stopped, and the next message takes the conversation up again", e.deadline)
}
