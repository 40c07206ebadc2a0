package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// stopNote ends the answer of a turn asked to end, saying so: after what
// the model streamed before it was stopped, or alone when it was stopped
// between rounds.
const stopNote = "[Stopped: the turn was asked to end here.]"

var _ acp.Canceller = (*Harness)(nil)

// Cancel asks agent's running turn of thread to end (ACP's
// session/cancel). The ask is kept in the conversation's folder (its end
// file), so a turn another process sharing the store runs sees it at its
// next round; a turn running here is stopped at once: the model's stream
// is cut, and what it streamed is stored as the turn's last answer with
// a note saying it was stopped. A tool call already running finishes and
// its answer is kept; no new round begins. A thread with no conversation
// has no turn to end, and nothing is written.
func (h *Harness) Cancel(ctx context.Context, agent, thread string) error {
	if err := contract.CheckThread(thread); err != nil {
		return err
	}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return err
	}
	dir, err := a.paths.Conversation(thread)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	at := h.cfg.Now()
	if err := a.folders.AskEnd(ctx, thread, at); err != nil {
		return fmt.Errorf("cancel %s of %s: %w", thread, agent, err)
	}
	if t, ok := h.turns.Load(turnKey(agent, thread)); ok {
		t.(*turn).end.ask(at)
	}
	return nil
}

func turnKey(agent, thread string) string { return agent + "\x00" + thread }

// running notes t as its conversation's turn running here, for Cancel to
// reach, until ran is called: from when it holds the lease, before its
// message is stored, so a cancel that comes meanwhile isn't missed.
func (h *Harness) running(t *turn) {
	h.turns.Store(turnKey(t.c.agent, t.c.thread), t)
}

// ran notes that t no longer runs here.
func (h *Harness) ran(t *turn) {
	h.turns.CompareAndDelete(turnKey(t.c.agent, t.c.thread), t)
}

// ending is how a turn running here is asked to end: asked, the cancel
// of the model's stream while one runs, and when the turn last ended for
// an ask (an ask from before then was answered by that end).
type ending struct {
	mu    sync.Mutex
	asked bool
	cut   context.CancelFunc
	since time.Time
}

// ask asks the turn to end, cutting the model's stream if one runs,
// unless the turn has ended for an ask since at.
func (e *ending) ask(at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if at.Before(e.since) {
		return
	}
	e.asked = true
	if e.cut != nil {
		e.cut()
	}
}

// answered forgets the ask once the turn has ended for it, at at, so a
// message that joins after the stopped answer is answered as any other.
func (e *ending) answered(at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = false
	e.since = at
}

// after is when the turn last ended for an ask, zero if it never did.
func (e *ending) after() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.since
}

func (e *ending) wasAsked() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.asked
}

// stream is the context of one model stream, cut when the turn is asked
// to end (at once, if it was already); done lets it go.
func (e *ending) stream(ctx context.Context) (sctx context.Context, done func()) {
	sctx, cut := context.WithCancel(ctx)
	e.mu.Lock()
	if e.asked {
		cut()
	} else {
		e.cut = cut
	}
	e.mu.Unlock()
	return sctx, func() {
		e.mu.Lock()
		e.cut = nil
		e.mu.Unlock()
		cut()
	}
}

// errStopped is round's error when the model's stream was cut because
// the turn was asked to end: text is what it streamed before.
type errStopped struct{ text string }

func (e errStopped) Error() string { return "the turn was asked to end" }

// endAsked says whether the turn was asked to end: by Cancel here, or by
// the conversation's end file, asked since the turn's message was stored
// (and since it last ended for an ask). An end asked before (a cancel
// when nothing ran) isn't this turn's: it is cleared and the turn goes
// on. One read of a small file, at each round's start.
func (t *turn) endAsked(ctx context.Context) bool {
	if t.end.wasAsked() {
		return true
	}
	at, ok, err := t.c.folders.EndAsked(ctx, t.c.thread)
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "read whether a turn was asked to end", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		return false
	}
	if !ok {
		return false
	}
	since := t.began()
	if after := t.end.after(); after.After(since) {
		since = after
	}
	if at.Before(since) {
		t.clearEnd(ctx)
		return false
	}
	return true
}

// began is when the message that began the turn was stored, zero when
// the turn doesn't hold it.
func (t *turn) began() time.Time {
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Seq == t.start {
			return e.Time
		} else if e.Seq < t.start {
			break
		}
	}
	return time.Time{}
}

// stopped ends the turn asked to end: text, what the model streamed of
// the round it was cut in, and a note saying it was stopped are streamed
// and stored as its last answer, with no calls. The answer saw every
// message before it, so one that joined the turn is answered by it too,
// and no new round begins for it. The end asked is then cleared.
func (t *turn) stopped(ctx context.Context, text string) (finished, error) {
	t.out.startRound()
	sent, capped := t.out.chunk(stopNote, false)
	switch {
	case capped:
		text += sent + cutNote
	case text != "":
		text += "\n\n" + stopNote
	default:
		text = stopNote
	}
	ev, err := t.with.store.append(ctx, t.c, store.Event{Kind: store.KindAnswer, Text: text}, t.hold(ctx))
	if err != nil {
		return finished{}, err
	}
	if !t.follows(ev) {
		if err := t.refresh(ctx); err != nil {
			return finished{}, err
		}
	}
	t.end.answered(ev.Time)
	t.clearEnd(ctx)
	return finished{seq: ev.Seq, stop: acp.StopCancelled}, nil
}

// clearEnd forgets the conversation's end asked; a failure is logged, and
// the next turn clears it as one asked before its message.
func (t *turn) clearEnd(ctx context.Context) {
	if err := t.c.folders.ClearEnd(ctx, t.c.thread); err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "clear a turn's end", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
	}
}

// caller is the context the answer is streamed to its caller under, and
// false once the caller went. A context session/cancel ended still has
// its caller, waiting for the answer and what streams before it, so the
// stream goes on under it without its cancel.
func (a *answer) caller() (context.Context, bool) {
	if a.ctx.Err() == nil {
		return a.ctx, true
	}
	if acp.IsCancelled(a.ctx) {
		return context.WithoutCancel(a.ctx), true
	}
	return nil, false
}
