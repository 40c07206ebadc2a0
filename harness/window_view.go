package harness

import (
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/store"
)

// windowView is a conversation's window at a checkpoint as the events
// read hold it (window.Of, without its copy of the events): where it
// begins among them, the summary it starts with and its rough tokens.
// It is kept with the events, turn after turn (history), and extended as
// they grow, so a turn looks only at what was added since it last
// looked.
type windowView struct {
	ok        bool
	start     int64 // the checkpoint's start it is of
	first     int   // the index of the first event from start
	to        int   // the events looked at: events[:to]
	seen      int   // the rough tokens of the events the model sees from start
	summary   int   // the index of the summary it starts with; -1 none
	sumTokens int   // the summary's
}

// tokens is the window's rough tokens, its summary's included
// (window.View.Tokens).
func (v *windowView) tokens() int { return v.seen + v.sumTokens }

// shift moves the view to events from which the first n were cut,
// forgetting it when it began among them.
func (v *windowView) shift(n int) {
	if !v.ok || n == 0 {
		return
	}
	if v.first < n || v.summary >= 0 && v.summary < n {
		*v = windowView{}
		return
	}
	v.first, v.to = v.first-n, v.to-n
	if v.summary >= 0 {
		v.summary -= n
	}
}

// view is the conversation's window at cp among the events read: the one
// kept, extended by the events added since, or, at another start, looked
// for afresh. Each event's count (window.Count) is counted once and kept
// with the events.
func (r *reader) view(cp store.Checkpoint) *windowView {
	for i := len(r.counts); i < len(r.events); i++ {
		r.counts = append(r.counts, window.Count(r.events[i]))
	}
	v := &r.win
	if !v.ok || v.start != cp.Start || v.to > len(r.events) {
		*v = windowView{ok: true, start: cp.Start, summary: -1}
	}
	for ; v.to < len(r.events); v.to++ {
		e := &r.events[v.to]
		if e.Seq < cp.Start {
			v.first = v.to + 1
			continue
		}
		if e.Kind == store.KindSummary && e.Covers != nil && e.Covers.To+1 == cp.Start {
			v.summary, v.sumTokens = v.to, window.EventTokens(*e)
		}
		v.seen += r.counts[v.to]
	}
	return v
}

// forgetView forgets the window kept, its messages and the last sets:
// the events they were of are gone.
func (r *reader) forgetView() {
	r.win, r.msgs, r.sets = windowView{}, keptMessages{}, lastSets{}
}

// lastSets is where the last model_set that names a model and the last
// chat_set that sets verbose are among the events looked at
// (events[:to]): events[model-1] and events[chat-1], none when 0. It is
// kept with the events, turn after turn, and looks only at those added
// since.
type lastSets struct{ model, chat, to int }

// shift moves it to events from which the first n were cut: a set among
// those is no longer among the events.
func (m *lastSets) shift(n int) {
	m.model, m.chat, m.to = max(m.model-n, 0), max(m.chat-n, 0), max(m.to-n, 0)
}

// lastSet is the last model_set that names a model among the events
// read (model) and the last chat_set that sets verbose (chat); nil for
// none.
func (r *reader) lastSet() (model, chat *store.Event) {
	m := &r.sets
	if m.to > len(r.events) {
		*m = lastSets{}
	}
	for ; m.to < len(r.events); m.to++ {
		switch e := &r.events[m.to]; {
		case e.Kind == store.KindModelSet && e.Model != "":
			m.model = m.to + 1
		case e.Kind == store.KindChatSet && e.Verbose != nil:
			m.chat = m.to + 1
		}
	}
	if m.model > 0 {
		model = &r.events[m.model-1]
	}
	if m.chat > 0 {
		chat = &r.events[m.chat-1]
	}
	return model, chat
}
