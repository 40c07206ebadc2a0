package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/store"
)

// reader is a turn's reader of its conversation's events: the events read
// so far, begun from those the harness kept of the conversation's last
// turn here, with what the turn learns as it reads them.
type reader struct {
	c    *conv
	hist *history

	events []store.Event // the conversation, as read so far
	// counts are the events' window counts (window.Count), the first
	// len(counts) of them, kept with them from turn to turn (view).
	counts []int
	// win is the window among the events as last looked at (view), kept
	// with them from turn to turn.
	win windowView
	// msgs are the window's messages as last sent (keptMessages), kept
	// with the events from turn to turn.
	msgs keptMessages
	// sets are where the last model_set and chat_set among the events are
	// (lastSet), kept with them from turn to turn.
	sets lastSets
	// bytes is the size of events[:sized] (eventSize's sum), counted
	// once for the history's bound.
	bytes, sized int
	// readTo is how many of events, from the first, are as the store
	// holds them: read from it, or the turn's own, each added right after
	// those (follows), which a read gives back the same (every driver's
	// Read gives an event as it was appended: store/storetest). The rest
	// begin with one the turn added after events it wrote but didn't
	// read. What the harness may keep for the conversation's next turn,
	// which so doesn't read back what the turn wrote.
	readTo int
	// again: the events were kept after the conversation's last turn
	// here, and are kept again after this one (history.put).
	again bool
	// anchored: events were kept from an earlier turn, and the next read
	// reads their last again, to prove the conversation is the one kept.
	anchored bool
	// current: events were read, or extended by the turn's own append
	// right after them, just before the turn's rounds begin, under its
	// lease; the first round needn't read again.
	current bool
	// read: the conversation was read (refresh), so events empty is a
	// conversation without any.
	read  bool
	start int64 // the message that began the turn, 0 for none
	// steeredOnly: the turn answers only messages that joined after its
	// own had its answer (found, afterAnswer), which, in a link: thread,
	// the processes that told them steered keep for them (cover).
	steeredOnly bool
	// cp is the window's checkpoint as the latest events read say
	// (window_turn.go): the events begin at or before its start.
	cp store.Checkpoint
	// ahead is what the call that took or let go the lease read with it,
	// for the refresh after it (turn_lease.go).
	ahead readAhead
}

// resume begins the events with those the harness kept of the
// conversation after its last turn here, if any.
func (r *reader) resume() {
	k := r.hist.take(r.c.agent, r.c.thread)
	r.events, r.counts, r.win, r.msgs, r.sets = k.events, k.counts, k.win, k.msgs, k.sets
	r.bytes, r.sized = k.bytes, len(k.events)
	if cp, ok := window.Latest(r.events); ok {
		r.cp = cp
	} else {
		r.events, r.counts, r.bytes, r.sized = nil, nil, 0, 0
		r.forgetView()
	}
	r.readTo = len(r.events)
	r.anchored = len(r.events) > 0
	r.again = r.anchored
}

// keep keeps the events read, from the window's start, for the
// conversation's next turn here, as of now.
func (r *reader) keep(now func() time.Time) {
	read := r.events[:r.readTo]
	i := 0
	for i < len(read) && read[i].Seq < r.cp.Start {
		i++
	}
	counts := r.counts[:min(len(r.counts), r.readTo)]
	win, msgs, sets := r.win, r.msgs, r.sets
	if win.to > r.readTo || sets.to > r.readTo { // they hold events the next turn reads back, maybe elsewhere
		win, msgs, sets = windowView{}, keptMessages{}, lastSets{}
	}
	win.shift(i)
	msgs.shift(i)
	sets.shift(i)
	bytes := r.bytes // of events[:sized]; those kept are read[i:]
	for _, e := range r.events[min(r.sized, r.readTo):r.readTo] {
		bytes += eventSize(e)
	}
	for _, e := range r.events[r.readTo:max(r.sized, r.readTo)] {
		bytes -= eventSize(e)
	}
	for _, e := range read[:i] {
		bytes -= eventSize(e)
	}
	r.hist.put(r.c.agent, r.c.thread, kept{events: read[i:], bytes: bytes, counts: counts[min(i, len(counts)):], win: win, msgs: msgs, sets: sets, again: r.again}, now())
}

// begun notes e, the message that began the turn, just written: when it
// follows the events read, they are current.
func (r *reader) begun(e store.Event) {
	r.start = e.Seq
	r.current = r.follows(e)
}

// found begins a turn nobody waits for, its events read: one a crash
// left unfinished, or one answering messages that joined a turn whose
// lease went before it saw them. Its message is the latest not steered.
func (r *reader) found() {
	for i := len(r.events) - 1; i >= 0; i-- {
		if e := r.events[i]; e.Kind == store.KindMessage && !e.Steered {
			r.start = e.Seq
			break
		}
	}
	r.steeredOnly = onlySteeredWait(r.events)
	r.current = true
}

// onlySteeredWait says whether the messages no answer answered yet, those
// past the last an answer saw, are all steered: none is a turn's own.
// Events with no answer that makes no call say nothing of the messages
// before them, which may hold the turn's own: false.
func onlySteeredWait(events []store.Event) bool {
	seen, answered := int64(0), false
	for _, e := range events {
		if store.FinalAnswer(e) {
			answered = true
			if e.Seen == 0 {
				seen = max(seen, e.Seq)
			} else {
				seen = max(seen, e.Seen)
			}
		}
	}
	if !answered {
		return false
	}
	for _, e := range events {
		if e.Kind == store.KindMessage && e.Seq > seen && !e.Steered {
			return false
		}
	}
	return true
}

// readStale reads what was written since the events were last read,
// unless they are current (the turn's first round after its message);
// from then on they are not.
func (r *reader) readStale(ctx context.Context) error {
	if r.current {
		r.current = false
		return nil
	}
	return r.refresh(ctx)
}

// refresh reads the events written since the last read, noting the
// window's latest checkpoint. With none read yet, it reads the window
// (readWindow), not the whole conversation. After events kept from an earlier turn, it
// reads their last again, and reads the window afresh when that isn't the
// event kept.
func (r *reader) refresh(ctx context.Context) error {
	n := len(r.events)
	var more []store.Event
	var err error
	if n == 0 {
		more, err = r.readWindow(ctx) // window_turn.go
	} else {
		more, err = r.readSince(ctx, r.since()) // turn_lease.go
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", r.c.thread, err)
	}
	if r.anchored {
		r.anchored = false
		if len(more) > 0 && same(more[0], r.events[n-1]) {
			more = more[1:]
		} else {
			// Not the conversation kept (made again since): read its window
			// afresh.
			r.events, r.counts, r.readTo, n = nil, nil, 0, 0
			r.bytes, r.sized = 0, 0
			r.forgetView()
			if more, err = r.readWindow(ctx); err != nil {
				return fmt.Errorf("read %s: %w", r.c.thread, err)
			}
		}
	}
	r.read = true
	r.noteCheckpoint(more)
	if r.readTo == n {
		r.readTo += len(more)
	}
	r.events = append(r.events, more...)
	if n := len(r.events); n > 0 {
		// The last event read, or the one kept that the read began with:
		// the conversation's next number is known without asking.
		r.c.saw(r.events[n-1].Seq)
	}
	return nil
}

// follows adds e, the turn's own event just written, to the events read
// when it is the one right after them (so none came between; the first,
// of a conversation read and found without any), and says whether it
// was. A large prompt's message is so never read back, in the turn or,
// kept with the events read, in the next.
func (r *reader) follows(e store.Event) bool {
	n := len(r.events)
	switch {
	case n == 0 && !(r.read && e.Seq == 1):
		return false
	case n > 0 && r.events[n-1].Seq+1 != e.Seq:
		return false
	}
	r.events = append(r.events, store.InUTC(e))
	if r.readTo == n {
		r.readTo++
	}
	return true
}

// lastSeq is the number of the last event read.
func (r *reader) lastSeq() int64 {
	if n := len(r.events); n > 0 {
		return r.events[n-1].Seq
	}
	return 0
}

// waiting says whether the conversation's last message is still to be
// answered: no answer that makes no call came after it having seen it
// (an answer written after a message that joined while the model
// answered didn't see it).
func waiting(events []store.Event) bool {
	last := -1
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == store.KindMessage {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	return answerOf(events[last+1:], events[last].Seq) < 0
}

// roundsSince counts the rounds of calls made since the message start
// that began the turn (0: every round): 0 for a new turn, more for one a
// crash cut short.
func roundsSince(events []store.Event, start int64) int {
	n := 0
	for i := len(events) - 1; i >= 0 && events[i].Seq > start; i-- {
		if e := events[i]; e.Kind == store.KindAnswer && len(e.Calls) > 0 {
			n++
		}
	}
	return n
}
