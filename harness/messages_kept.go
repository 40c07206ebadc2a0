package harness

import (
	"slices"
	"unsafe"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// keptMessages are a window's messages as last sent, kept with the
// events from turn to turn (history), so a turn makes the messages of
// what was added since, not the window's every message again: the
// window's prefix is sent the same, turn after turn, for the provider's
// cache, and is the same array.
//
// The events they were made of are settled when nothing added after
// them can change their messages: each of their messages has its
// answer among them (a message that joined a turn goes after the answer
// it joined, joinedAfter), and each call among them has its first result
// among them or none anywhere yet (a result that comes later, rare,
// makes them all again). The messages of what came after are made anew
// at each request, after the settled ones, the last of which may take
// their parts (a role's neighbours merged).
//
// A request's messages are part of the one array, which a later request
// extends: what a request was handed is never written again (handed); a
// message that would change there (a merge into a message sent) is
// written in a copy of the array. Memory is bounded with the events, in
// the history's bound (size).
type keptMessages struct {
	ok bool
	// What they are made for: the window's start, the summary it starts
	// with (0: none), whether tools are offered, the model (what it
	// takes).
	start, summary int64
	withTools      bool
	model          string

	msgs   []model.Message // as sent (sendable): a user's message first (lead) when the window's first is the model's
	lead   int             // 1 with that first message, 0 without, -1 before any message
	n      int             // msgs[lead:lead+n] are the settled events'; the last of them may still take parts
	open   model.Message   // that last one as the settled events made it, before what came after merged in
	handed int             // msgs' array before handed was handed out in a request: never written again
	parts  int             // the parts of msgs, for size
	frozen int             // the parts of msgs[:lead+n-1], those of the settled events but their last

	first      int                   // the index of the window's first event among the events
	at         int                   // the events from first before at are settled
	results    map[string]callResult // the first result of each call among them
	unanswered map[string]bool       // the calls among them with no result when settled
}

// size estimates the bytes kept beyond the events, whose strings the
// messages share.
func (k *keptMessages) size() int {
	if !k.ok {
		return 0
	}
	return cap(k.msgs)*int(unsafe.Sizeof(model.Message{})) + k.parts*int(unsafe.Sizeof(model.Part{})) + 64*(len(k.results)+len(k.unanswered))
}

// shift moves the messages to events from which the first n were cut,
// forgetting them when they were made of any of those.
func (k *keptMessages) shift(n int) {
	if !k.ok || n == 0 {
		return
	}
	if k.first < n {
		*k = keptMessages{}
		return
	}
	k.first, k.at = k.first-n, k.at-n
}

// keptMessages is the window v's messages as sent (sendable), for a
// model that takes what takes says (its name, model) and with tools
// offered or not: the messages kept, extended by those of the events
// added since, or made afresh when the window or what they are for
// changed. The slice is the request's: appending to it copies.
func (r *reader) keptMessages(v *windowView, withTools bool, name string, takes func(model.Modality) bool) []model.Message {
	k := &r.msgs
	sum := int64(0)
	if v.summary >= 0 {
		sum = r.events[v.summary].Seq
	}
	if !k.ok || k.start != v.start || k.summary != sum || k.withTools != withTools || k.model != name || k.first != v.first || k.at > v.to || k.lateResult(r.events[k.at:v.to]) {
		*k = keptMessages{ok: true, start: v.start, summary: sum, withTools: withTools, model: name, first: v.first, at: v.first}
	}
	events := r.events[k.at:v.to]
	var recent map[string]callResult // the first results since the settled events
	for i := range events {
		if e := &events[i]; e.Kind == store.KindToolResult {
			if _, ok := k.results[e.CallID]; !ok {
				recent = addResult(recent, e)
			}
		}
	}
	results := callResults{settled: k.results, recent: recent}
	cut := settledTo(events, results)

	// The messages from the last settled one: it, then the newly
	// settled events', then the rest's.
	from, frozen := k.lead+k.n-1, k.frozen // where they go in msgs, and the parts before
	w := writer{withTools: withTools, results: results}
	if k.n > 0 {
		w.out = append(w.out, k.open)
	} else if sum != 0 {
		w.summary(&r.events[v.summary])
	}
	w.events(events[:cut])
	settled := len(w.out)
	if settled > 0 {
		k.open = w.out[settled-1]
		k.open.Parts = k.open.Parts[:len(k.open.Parts):len(k.open.Parts)] // a merge copies
	}
	w.events(events[cut:])

	if k.n == 0 { // the first message is settled by none: the window's first may yet be another
		k.lead, from, frozen = -1, 0, 0
		if len(w.out) > 0 {
			k.lead = 0
			if w.out[0].Role != model.RoleUser {
				k.put(0, model.Message{Role: model.RoleUser, Parts: []model.Part{model.Text(left)}})
				k.lead, from, frozen = 1, 1, 1
			}
		}
	}
	sent := model.Substitute(w.out, takes)
	k.parts = frozen
	for i, m := range sent {
		k.put(from+i, m)
		k.parts += len(m.Parts)
	}
	k.msgs = k.msgs[:from+len(sent)]
	if settled > 0 { // the last settled message stays open to a merge
		for _, m := range sent[:settled-1] {
			frozen += len(m.Parts)
		}
		k.frozen, k.n = frozen, max(k.n-1, 0)+settled
	}
	k.settle(events[:cut], results)
	k.handed = max(k.handed, len(k.msgs))
	if len(k.msgs) == 0 {
		return []model.Message{} // as model.Substitute gives no message
	}
	return k.msgs[:len(k.msgs):len(k.msgs)]
}

// settle notes events, newly settled, as made: their calls' first
// results, and the calls results didn't answer.
func (k *keptMessages) settle(events []store.Event, results callResults) {
	for i := range events {
		e := &events[i]
		k.results = addResult(k.results, e)
		if e.Kind == store.KindAnswer {
			for _, c := range e.Calls {
				if _, ok := results.of(c.ID); !ok {
					if k.unanswered == nil {
						k.unanswered = map[string]bool{}
					}
					k.unanswered[c.ID] = true
				}
			}
		}
	}
	k.at += len(events)
}

// put sets message i of msgs to m, i at most their length: in place
// where no request was handed it, or where it is already m; else in a
// copy of the array, which no request has.
func (k *keptMessages) put(i int, m model.Message) {
	if i < k.handed {
		if was := k.msgs[:k.handed][i]; sameMessage(was, m) {
			k.msgs = k.msgs[:i+1]
			return
		}
		msgs := make([]model.Message, i, max(2*i, 16))
		copy(msgs, k.msgs[:i])
		k.msgs, k.handed = msgs, 0
	}
	k.msgs = append(k.msgs[:i], m)
}

// lateResult says whether events hold the first result of a call the
// settled events hold as unanswered: their messages are made again.
func (k *keptMessages) lateResult(events []store.Event) bool {
	if len(k.unanswered) == 0 {
		return false
	}
	for i := range events {
		if e := &events[i]; e.Kind == store.KindToolResult && k.unanswered[e.CallID] {
			return true
		}
	}
	return false
}

// settledTo is how many of events, the first after those settled, are
// settled now: up to the last point where every message has its answer
// and every call has its first result (results'), if it has any yet.
func settledTo(events []store.Event, results callResults) int {
	cut, waiting := 0, false
	var open []string // calls whose result comes later among events
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case store.KindMessage:
			waiting = true
		case store.KindAnswer:
			waiting = false
			for _, c := range e.Calls {
				if r, ok := results.of(c.ID); ok && r.seq > e.Seq {
					open = append(open, c.ID)
				}
			}
		case store.KindToolResult:
			if r, ok := results.of(e.CallID); ok && r.seq == e.Seq {
				open = slices.DeleteFunc(open, func(id string) bool { return id == e.CallID })
			}
		}
		if !waiting && len(open) == 0 {
			cut = i + 1
		}
	}
	return cut
}

// sameMessage says whether a and b are the same message.
func sameMessage(a, b model.Message) bool {
	return a.Role == b.Role && slices.Equal(a.Parts, b.Parts)
}
