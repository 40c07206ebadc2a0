package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/lnk-dev/link/store"
)

// errAnswered refuses the answer of a turn whose message another turn
// answered first: the turn's lease lapsed (its process paused past it)
// and another process's turn took it. A message is answered once.
var errAnswered = errors.New("answered already by another turn: this turn's lease lapsed")

// appendAnswer appends e, an answer that ends a round (store.FinalAnswer)
// having seen the events up to e.Seen, as append does, unless an answer
// already answers msg, the last message it saw: one among the events the
// turn read (events, with those up to e.Seen it didn't read, as a
// message that joined it), or one written since. Its first
// try takes the number after e.Seen, which holds only when nothing was
// written since (unless this process knows something was: it reads
// first); refused that, it reads what was, and tries the number after
// it, so the read and the write are one step of the driver's
// append-if-next. The refusal is errAnswered, nothing written.
func (h *Harness) appendAnswer(ctx context.Context, c *conv, e store.Event, events []store.Event, hook appendHook) (ev store.Event, err error) {
	if n := len(events); n > 0 && e.Seen > events[n-1].Seq {
		// Messages that joined the turn after its read, and its own
		// rounds' answers: the answer saw them, so its message is the
		// last of them.
		more, err := c.reader().Read(ctx, c.thread, events[n-1].Seq+1)
		if err != nil {
			err = fmt.Errorf("append %s to %s: %w", e.Kind, c.thread, err)
			if hook != nil {
				hook(e, true, err)
			}
			return e, err
		}
		events = events[:n:n]
		for _, m := range more {
			if m.Seq <= e.Seen {
				events = append(events, m)
			}
		}
	}
	msg := lastMessage(events)
	if msg == 0 || e.Seen == 0 {
		return h.append(ctx, c, e, hook)
	}
	if hook != nil {
		defer func() { hook(ev, true, err) }()
	}
	if i := answerOf(events, msg); i >= 0 {
		return e, fmt.Errorf("answer to %s#%d: %w, as #%d", c.thread, msg, errAnswered, events[i].Seq)
	}
	defer h.locks.lock(c.agent, c.thread)()
	keeper := c.keeper()
	next := e.Seen + 1
	read := c.next.Load() > next // written since, here: a message that joined
	for range maxAppendTries {
		if read {
			since, rerr := c.reader().Read(ctx, c.thread, next)
			if rerr != nil {
				return e, fmt.Errorf("append %s to %s: %w", e.Kind, c.thread, rerr)
			}
			if i := answerOf(since, msg); i >= 0 {
				return e, fmt.Errorf("answer to %s#%d: %w, as #%d", c.thread, msg, errAnswered, since[i].Seq)
			}
			if n := len(since); n > 0 {
				next = since[n-1].Seq + 1
			}
		}
		e.Seq = next
		e.Time = h.cfg.Now().UTC()
		if hook != nil {
			hook(e, false, nil)
		}
		if err = keeper.Append(ctx, c.thread, e); !errors.Is(err, store.ErrSeqTaken) {
			break
		}
		read = true
	}
	if err != nil {
		return e, fmt.Errorf("append %s to %s: %w", e.Kind, c.thread, err)
	}
	c.saw(e.Seq)
	return e, nil
}

// lastMessage is the number of the last message among events; 0 for none.
func lastMessage(events []store.Event) int64 {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == store.KindMessage {
			return events[i].Seq
		}
	}
	return 0
}
