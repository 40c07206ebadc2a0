package window

import "github.com/lnk-dev/link/store"

// Look is how many of a conversation's latest events a turn reads first
// to find the window's checkpoint.
const Look = 32

// Latest is the latest checkpoint among events, a conversation's latest
// in order: the last one an answer, a summary or a checkpoint recorded.
// With none, events that begin with the conversation's first start
// there; ok is false otherwise (read further back).
func Latest(events []store.Event) (cp store.Checkpoint, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if w := events[i].Window; w != nil {
			return *w, true
		}
	}
	if len(events) > 0 && events[0].Seq == 1 {
		return store.Checkpoint{Start: 1, StartTime: events[0].Time}, true
	}
	return store.Checkpoint{}, false
}

// View is a conversation's window: the summary it starts with, if any,
// then its events from its start, summaries and what the model doesn't
// see left out.
type View struct {
	Start   store.Checkpoint
	Summary *store.Event
	Events  []store.Event
	Tokens  int // rough, the summary's included
}

// Of is the window at cp of events (which begin at or before cp.Start):
// it starts with the latest summary that stands for what came before
// cp.Start, when there is one.
//
// Its events are a part of events itself, not a copy, when every event
// from the window's start is one the model sees (the common case: a
// window of messages and answers), capped so an append to either copies;
// the caller changes neither.
func Of(events []store.Event, cp store.Checkpoint) View {
	v := View{Start: cp}
	n, first, all := 0, -1, true
	for i := range events {
		switch {
		case events[i].Seq < cp.Start:
			all = all && first < 0 // none before the start after one past it
		case !seen(events[i].Kind):
			first, all = max(first, 0), false
		default:
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if first < 0 {
		first = len(events)
	}
	if all {
		v.Events = events[first:len(events):len(events)]
		for i := first; i < len(events); i++ {
			v.Tokens += EventTokens(events[i])
		}
		return v
	}
	v.Events = make([]store.Event, 0, n)
	for i := range events {
		e := &events[i]
		if e.Seq < cp.Start {
			continue
		}
		switch e.Kind {
		case store.KindSummary:
			if e.Covers != nil && e.Covers.To+1 == cp.Start {
				v.Summary = e
			}
		case store.KindMessage, store.KindAnswer, store.KindToolResult:
			v.Events = append(v.Events, *e)
			v.Tokens += EventTokens(events[i])
		}
	}
	if v.Summary != nil {
		v.Tokens += EventTokens(*v.Summary)
	}
	return v
}

// Count is what e counts in a window that holds it: EventTokens of what
// the model sees (a message, an answer, a tool's answer), none of the
// rest.
func Count(e store.Event) int {
	if !seen(e.Kind) {
		return 0
	}
	return EventTokens(e)
}

// seen says whether the model sees an event of kind k in a window:
// messages, answers and tools' answers.
func seen(k store.Kind) bool {
	return k == store.KindMessage || k == store.KindAnswer || k == store.KindToolResult
}

// canStart says whether a window may start at e: a message that began a
// turn, or an answer, which begins a round (its calls' answers come after
// it).
func canStart(e store.Event) bool {
	return e.Kind == store.KindMessage && !e.Steered || e.Kind == store.KindAnswer
}

// Next is the drop point after cp: the first message that began a turn
// once half of room has gone before it, counted from cp, so the
// conversation itself fixes it; within one long turn with no such
// message, the first answer (a round's start) past it. What the model_set and chat_set
// events leaving set is carried in the checkpoint. ok is false when no
// such event is among events.
func Next(events []store.Event, cp store.Checkpoint, room int) (store.Checkpoint, bool) {
	if next, ok := next(events, cp, room, startsTurn); ok {
		return next, true
	}
	return next(events, cp, room, canStart) // within one long turn, at a round
}

func next(events []store.Event, cp store.Checkpoint, room int, can func(store.Event) bool) (store.Checkpoint, bool) {
	half := int64(max(room/2, 1))
	next := cp
	var gone int64
	for _, e := range events {
		if e.Seq < cp.Start {
			continue
		}
		if e.Seq > cp.Start && gone >= half && can(e) {
			next.Start, next.StartTime, next.TokensBefore = e.Seq, e.Time, cp.TokensBefore+gone
			return next, true
		}
		gone += int64(EventTokens(e))
		switch {
		case e.Kind == store.KindModelSet && e.Model != "":
			next.Model = e.Model
		case e.Kind == store.KindChatSet && e.Verbose != nil:
			v := *e.Verbose
			next.Verbose = &v
		}
	}
	return cp, false
}

// startsTurn says whether e is a message that began a turn.
func startsTurn(e store.Event) bool { return e.Kind == store.KindMessage && !e.Steered }

// Fit is where the window must start for what stays, with reserve tokens
// for a summary before it, to fit room: cp while it does, else the drop
// points after it, one after another. moved says whether it moved; a
// window that can't move far enough (one long round) moves as far as it
// can.
func Fit(events []store.Event, cp store.Checkpoint, room, reserve int) (store.Checkpoint, bool) {
	at := cp
	for {
		v := Of(events, at)
		stays := v.Tokens
		if v.Summary != nil {
			stays -= EventTokens(*v.Summary)
		}
		if stays+reserve <= room {
			return at, at.Start != cp.Start
		}
		next, ok := Next(events, at, room)
		if !ok {
			return at, at.Start != cp.Start
		}
		at = next
	}
}

// Leaving is what leaves the window when it moves from from to to, as
// a summary is made of it: the summary the window started with, then the
// events between, newest first within budget tokens (cut at their
// oldest, where a turn or a round begins), so the request never outgrows
// the window. The summary is left out when it doesn't fit beside them.
func Leaving(events []store.Event, from, to store.Checkpoint, budget int) (summary *store.Event, leaving []store.Event) {
	v := Of(events, from)
	var between []store.Event
	for _, e := range v.Events {
		if e.Seq < to.Start {
			between = append(between, e)
		}
	}
	used, cut := 0, len(between)
	for i := len(between) - 1; i >= 0; i-- {
		used += EventTokens(between[i])
		if used > budget {
			break
		}
		if canStart(between[i]) {
			cut = i
		}
	}
	leaving = between[cut:]
	if v.Summary != nil && cut == 0 {
		n := EventTokens(*v.Summary)
		for _, e := range leaving {
			n += EventTokens(e)
		}
		if n <= budget {
			summary = v.Summary
		}
	}
	return summary, leaving
}

// Owner says whether the owner spoke among events (a message without a
// sender): only then does the model save notes before summarizing.
func Owner(events []store.Event) bool {
	for _, e := range events {
		if e.Kind == store.KindMessage && e.From == "" {
			return true
		}
	}
	return false
}
