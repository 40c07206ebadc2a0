package harness

import (
	"context"
	"log/slog"
)

// afterAnswer summarizes, once t's caller has its answer, what leaves
// the window at its next drop point (t.summaryDue), still under the
// turn's lease, renewed; then lets the lease go and answers, nobody
// waiting, a message another process wrote meanwhile (one that comes
// here waits for the lease to go, for a turn of its own: waitCompacted).
// A crash before the summary is written loses only the summary: the
// window stays where it was, and the next turn summarizes after its
// answer.
func (h *Harness) afterAnswer(t *turn) {
	next := *t.summaryDue
	t.summaryDue = nil
	k := turnKey(t.c.agent, t.c.thread)
	done := make(chan struct{})
	h.compacting.Store(k, done)
	finish := func() {
		h.compacting.CompareAndDelete(k, done)
		close(done)
	}
	if !h.begin() {
		t.c.release(context.WithoutCancel(h.life), t.holder)
		finish()
		return
	}
	go func() {
		defer h.end()
		ctx := h.life
		stop := t.renew(ctx)
		t.compact(ctx, next)
		stop()
		t.answerFirst = false
		t.out = newAnswer(nil, nil, t.with.maxAnswer, nil) // its caller gone
		t.steeredOnly = true                               // its caller had its answer
		again, err := t.letGo(ctx, nil)
		finish()
		if err == nil && again {
			t.delivery = t.c.answers.Begin(t.c.thread)
			var f finished
			if f, err = t.run(ctx); err == nil {
				t.keepAnswer(ctx, f) // kept for _link/recover
			} else {
				t.delivery.Failed()
			}
		}
		if err != nil {
			t.with.log.LogAttrs(ctx, slog.LevelWarn, "after a summary", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		}
		t.keep(t.with.clock.now)
	}()
}

// waitCompacted waits, when a turn here summarizes c after its answer,
// until it has let its lease go, so the message that came meanwhile is
// answered in a turn of its own rather than joining one whose answer is
// given.
func (h *Harness) waitCompacted(ctx context.Context, c *conv) error {
	v, ok := h.compacting.Load(turnKey(c.agent, c.thread))
	if !ok {
		return nil
	}
	if h.onWaitCompacted != nil {
		h.onWaitCompacted()
	}
	select {
	case <-v.(chan struct{}):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
