package harness

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
)

// A message of lnk agent chat send (a link: thread) told steered waits
// for the answer of the turn it joined, kept for it: the process that
// told it steered keeps it (cover), whichever process ran that turn and
// whatever home that process has, since lnk agent chat asks the endpoint
// it sent to. docs/decisions/044-steered-covered.md
// says why each step is where it is.

// Watching a steered message: its conversation is read again at once
// when a turn here lets its lease go, else at least every coverPoll,
// doubled at each read up to coverPollMax.
const (
	coverPoll    = 50 * time.Millisecond
	coverPollMax = time.Second
	// coverBack is how many events before the steered message the first
	// read takes, for the start of the turn whose answer answers it.
	coverBack = sweepWindow
	// coverTries bounds the turns of its own, and the reads in a row,
	// that fail to answer a steered message before cover gives it up to
	// the sweep, logged: a store or model that fails each time isn't
	// asked every second for as long as the process runs.
	coverTries = 3
	coverReads = 30
)

// wakes are the conversations' wake-ups in this process: a channel per
// conversation watched, closed when a turn here lets its lease go.
type wakes struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// wait is the channel closed at the next wake of agent's thread.
func (w *wakes) wait(agent, thread string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := turnKey(agent, thread)
	ch, ok := w.m[k]
	if !ok {
		if w.m == nil {
			w.m = map[string]chan struct{}{}
		}
		ch = make(chan struct{})
		w.m[k] = ch
	}
	return ch
}

// wake wakes those waiting on agent's thread.
func (w *wakes) wake(agent, thread string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := turnKey(agent, thread)
	if ch, ok := w.m[k]; ok {
		close(ch)
		delete(w.m, k)
	}
}

// coverAsync watches, in a task of its own, the steered message seq of
// c, a link: thread's, until an answer answers it, and keeps that answer
// for it (cover).
func (h *Harness) coverAsync(c *conv, seq int64) {
	h.background(func(ctx context.Context) { h.cover(ctx, c, seq) })
}

// cover keeps for the steered message seq of c the answer of the turn
// that answers it (steeredAnswer), for lnk agent chat, which asks for
// it: at once when a turn answered it already, else once one does. While
// none does and its lease is free (the turn it joined let go before it
// could see it, or its process died), cover takes the lease and answers
// it in a turn of its own, nobody waiting (finish). It ends with the
// harness's closing, the sender's connection with it.
func (h *Harness) cover(ctx context.Context, c *conv, seq int64) {
	var events []store.Event
	from := max(1, seq-coverBack)
	pause := coverPoll
	turns, failed := 0, 0
	for {
		wake := h.wakes.wait(c.agent, c.thread) // before the read: a let-go after it wakes this
		more, err := c.reader().Read(ctx, c.thread, from)
		if err == nil {
			failed = 0
			events = append(events, more...)
			if n := len(events); n > 0 {
				from = events[n-1].Seq + 1
			}
			if text, at, ok := steeredAnswer(events, seq); ok {
				if _, err := c.answers.KeepForChat(ctx, c.thread, text, time.Time{}, at); err != nil {
					h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "keep the answer of a steered message", slog.String("thread", c.thread), slog.String("err", err.Error()))
				}
				return
			}
			if turns == coverTries {
				h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "a steered message's answer not kept: its turns failed", slog.String("thread", c.thread), slog.Int64("seq", seq))
				return
			}
			var ran bool
			ran, err = h.answerLeft(ctx, c)
			if ran {
				turns++
				continue // read what it wrote
			}
		} else if failed++; failed == coverReads {
			h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "a steered message's answer not kept: its conversation doesn't read", slog.String("thread", c.thread), slog.Int64("seq", seq), slog.String("err", err.Error()))
			return
		}
		if err != nil && ctx.Err() == nil {
			h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "watch a steered message", slog.String("thread", c.thread), slog.String("err", err.Error()))
		}
		select {
		case <-wake:
		case <-time.After(pause):
			pause = min(2*pause, coverPollMax)
		case <-h.sweeper: // closing
			return
		case <-ctx.Done():
			return
		}
	}
}

// answerLeft takes c's lease when it is free, and answers, nobody
// waiting, the message no turn answered (finish): ran says it took it. A
// lease held says a turn runs, which reads the conversation before it
// lets its lease go.
func (h *Harness) answerLeft(ctx context.Context, c *conv) (ran bool, err error) {
	holder := h.holder()
	err = c.lease(ctx, holder, h.cfg.LeaseTTL)
	if errors.Is(err, store.ErrLeaseHeld) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !h.begin() {
		return false, c.release(context.WithoutCancel(ctx), holder)
	}
	defer h.end()
	h.finish(ctx, c, holder)
	return true, nil
}

// steeredAnswer is the answer that answers the message seq: text, the
// texts of the answers of its turn as its caller had them streamed, from
// the turn's message (the last before it not steered), or from the last
// answer given before seq came (a turn that went on for it, or a turn of
// its own), to its first answer that makes no call and saw seq; at is
// that answer's number. ok is false while no answer has answered it.
func steeredAnswer(events []store.Event, seq int64) (text string, at int64, ok bool) {
	last := answerOf(events, seq)
	if last < 0 {
		return "", 0, false
	}
	first := 0
	for i := last - 1; i >= 0; i-- {
		if e := events[i]; e.Kind == store.KindMessage && !e.Steered || e.Seq < seq && store.FinalAnswer(e) {
			first = i + 1
			break
		}
	}
	var texts []string
	for _, e := range events[first : last+1] {
		if (e.Kind == store.KindAnswer || e.Kind == store.KindFailure) && e.Text != "" {
			texts = append(texts, e.Text)
		}
	}
	return strings.Join(texts, "\n\n"), events[last].Seq, true
}

// answerOf is the place among events of the first answer after the
// message seq that makes no call and saw it: the answer that answers it;
// -1 for none.
func answerOf(events []store.Event, seq int64) int {
	from := len(events) // events are in order: those after seq are the last, read from the end
	for from > 0 && events[from-1].Seq > seq {
		from--
	}
	for i := from; i < len(events); i++ {
		if e := &events[i]; store.FinalAnswer(*e) && (e.Seen == 0 || e.Seen >= seq) {
			return i
		}
	}
	return -1
}
