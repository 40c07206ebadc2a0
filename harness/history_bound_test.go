package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// keptOf is events kept, sized.
func keptOf(events []store.Event) kept {
	k := kept{events: events}
	for _, e := range events {
		k.bytes += eventSize(e)
	}
	return k
}

// history keeps within its bound, the least lately used going first
// when it wasn't used lately, and lets go what a sweep's time didn't use.
func TestHistoryBound(t *testing.T) {
	conv := func(n int, text string) []store.Event {
		var es []store.Event
		for i := range n {
			es = append(es, store.Event{Seq: int64(i + 1), Kind: store.KindMessage, Text: text})
		}
		return es
	}
	one := eventSize(conv(1, "x")[0])
	take := func(hs *history, thread string) []store.Event {
		return hs.take("main", thread).events
	}
	hs := newHistory(10 * one)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	hs.put("main", "a", keptOf(conv(4, "x")), at)
	hs.put("main", "b", keptOf(conv(4, "x")), at.Add(time.Second))
	hs.put("main", "c", keptOf(conv(4, "x")), at.Add(keptLately)) // past the bound: a, not used lately, goes
	if take(hs, "a") != nil || hs.len() != 2 {
		t.Fatalf("the least lately used kept past the bound; %d kept", hs.len())
	}
	hs.put("main", "big", keptOf(conv(11, "x")), at) // over the bound alone: not kept
	if take(hs, "big") != nil {
		t.Fatal("a conversation over the bound kept")
	}
	hs.put("main", "d", keptOf(conv(2, "x")[1:]), at) // from a window's start, not the first
	if got := take(hs, "d"); len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("events from a window's start: took %v", got)
	}
	if got := take(hs, "b"); len(got) != 4 || take(hs, "b") != nil {
		t.Fatalf("took %d events, then again", len(got))
	}
	hs.put("main", "b", keptOf(conv(4, "x")), at.Add(time.Second))
	hs.expire(at.Add(keptLately)) // b unused since before: goes; c stays
	if hs.len() != 1 || take(hs, "c") == nil || hs.size != 0 {
		t.Fatalf("after expiry: %d kept, %d bytes", hs.len(), hs.size)
	}
	if none := newHistory(-1); func() bool { none.put("main", "a", keptOf(conv(1, "x")), at); return none.len() != 0 }() {
		t.Fatal("a history of no bytes kept one")
	}
}

// Many conversations taking turns, more than the bound holds, don't let
// go each the one whose turn is next: those kept stay kept, found at each
// of their turns, and the rest are read. One kept that grows past the
// bound still lets the least lately used go.
func TestHistoryKeepsThoseUsedLately(t *testing.T) {
	events := func(n int) []store.Event {
		es := make([]store.Event, n)
		for i := range es {
			es[i] = store.Event{Seq: int64(i + 1), Kind: store.KindMessage, Text: "x"}
		}
		return es
	}
	one := eventSize(events(1)[0])
	hs := newHistory(8 * one) // two conversations of four events
	at := time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC)
	threads := []string{"a", "b", "c", "d"}
	found := map[string]int{}
	for turn := range 40 { // each conversation's turn in order, a second apart
		thread := threads[turn%len(threads)]
		k := hs.take("main", thread)
		if k.events != nil {
			found[thread]++
		} else {
			k = keptOf(events(4))
		}
		hs.put("main", thread, k, at.Add(time.Duration(turn)*time.Second))
	}
	if found["a"] != 9 || found["b"] != 9 || found["c"]+found["d"] != 0 {
		t.Fatalf("found kept at their turns: %v; want a and b at each after their first, c and d never", found)
	}
	k := hs.take("main", "b") // b grows past the bound: a, the least lately used, goes
	k.events, k.bytes = events(5), 5*one
	hs.put("main", "b", k, at.Add(time.Minute))
	if hs.take("main", "a").events != nil || hs.take("main", "b").events == nil {
		t.Fatal("one kept that grew past the bound did not let the least lately used go")
	}
}

// The messages kept with a conversation's events count in the history's
// bound: a conversation whose events fit alone but not with its messages
// isn't kept.
func TestHistoryBoundsMessages(t *testing.T) {
	at := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	k := keptOf([]store.Event{{Seq: 1, Kind: store.KindMessage, Text: "hello"}})
	k.msgs = keptMessages{ok: true, msgs: make([]model.Message, 1, 64), parts: 40}
	if k.msgs.size() <= 0 {
		t.Fatal("messages kept are counted as no bytes")
	}
	hs := newHistory(1 << 20)
	hs.put("main", "a", k, at)
	if hs.size != k.bytes+k.msgs.size() {
		t.Fatalf("kept %d bytes, want the events' %d and the messages' %d", hs.size, k.bytes, k.msgs.size())
	}
	small := newHistory(k.bytes + k.msgs.size() - 1)
	if small.put("main", "a", k, at); small.len() != 0 {
		t.Fatal("a conversation over the bound with its messages kept")
	}
}

// history hands back the window counts kept with the events, those of
// the first of them when fewer were counted, never more than the events.
func TestHistoryCounts(t *testing.T) {
	es := []store.Event{{Seq: 1, Kind: store.KindMessage, Text: "one"}, {Seq: 2, Kind: store.KindAnswer, Text: "two"}}
	hs := newHistory(1 << 20)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	hs.put("main", "a", kept{events: es, counts: []int{5}}, at)
	if k := hs.take("main", "a"); len(k.events) != 2 || len(k.counts) != 1 || k.counts[0] != 5 {
		t.Fatalf("took %d events, counts %v", len(k.events), k.counts)
	}
	hs.put("main", "a", kept{events: es[1:], counts: []int{7, 8, 9}}, at)
	if k := hs.take("main", "a"); len(k.events) != 1 || len(k.counts) != 1 || k.counts[0] != 7 {
		t.Fatalf("took %d events, counts %v", len(k.events), k.counts)
	}
}

// A turn's window counts each event once: the counts are kept with the
// events for the next turn, which counts only what was added since; and
// its window is the one window.Of counts afresh.
func TestReaderCountsOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var es []store.Event
	for i := range 6 {
		e := store.Event{Seq: int64(i + 1), Time: t0, Kind: store.KindMessage, Text: strings.Repeat("word ", i+1)}
		if i%2 == 1 {
			e.Kind, e.Window = store.KindAnswer, &store.Checkpoint{Start: 1, StartTime: t0}
		}
		es = append(es, e)
	}
	hs := newHistory(1 << 20)
	c := &conv{agent: "main", thread: "telegram:1"}
	r := reader{c: c, hist: hs, events: es, readTo: len(es), cp: store.Checkpoint{Start: 1, StartTime: t0}}
	if got, want := asView(&r, r.cp), window.Of(es, r.cp); !sameJSON(got, want) {
		t.Fatalf("window %+v, want %+v", got, want)
	}
	if len(r.counts) != len(es) {
		t.Fatalf("%d counted of %d", len(r.counts), len(es))
	}
	r.keep(func() time.Time { return t0 })

	next := reader{c: c, hist: hs}
	next.resume()
	if len(next.events) != len(es) || len(next.counts) != len(es) {
		t.Fatalf("the next turn took %d events and %d counts, want %d of each", len(next.events), len(next.counts), len(es))
	}
	next.follows(store.Event{Seq: 7, Time: t0, Kind: store.KindMessage, Text: "and more"})
	all := append(append([]store.Event(nil), es...), store.Event{Seq: 7, Time: t0, Kind: store.KindMessage, Text: "and more"})
	for _, start := range []int64{1, 4} {
		cp := store.Checkpoint{Start: start, StartTime: t0}
		if got, want := asView(&next, cp), window.Of(all, cp); !sameJSON(got, want) {
			t.Fatalf("from %d: window %+v, want %+v", start, got, want)
		}
	}
	if len(next.counts) != len(all) {
		t.Fatalf("%d counted of %d", len(next.counts), len(all))
	}
}
