package harness

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// history keeps within its bound, the least lately used going first, and
// lets go what a sweep's time didn't use.
func TestHistoryBound(t *testing.T) {
	conv := func(n int, text string) []store.Event {
		var es []store.Event
		for i := range n {
			es = append(es, store.Event{Seq: int64(i + 1), Kind: store.KindMessage, Text: text})
		}
		return es
	}
	one := eventSize(conv(1, "x")[0])
	hs := newHistory(10 * one)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	hs.put("main", "a", conv(4, "x"), at)
	hs.put("main", "b", conv(4, "x"), at.Add(time.Second))
	hs.put("main", "c", conv(4, "x"), at.Add(2*time.Second)) // past the bound: a goes
	if hs.take("main", "a") != nil || hs.len() != 2 {
		t.Fatalf("the least lately used kept past the bound; %d kept", hs.len())
	}
	hs.put("main", "big", conv(11, "x"), at) // over the bound alone: not kept
	if hs.take("main", "big") != nil {
		t.Fatal("a conversation over the bound kept")
	}
	hs.put("main", "d", conv(2, "x")[1:], at) // from a window's start, not the first
	if got := hs.take("main", "d"); len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("events from a window's start: took %v", got)
	}
	if got := hs.take("main", "b"); len(got) != 4 || hs.take("main", "b") != nil {
		t.Fatalf("took %d events, then again", len(got))
	}
	hs.put("main", "b", conv(4, "x"), at.Add(time.Second))
	hs.expire(at.Add(2 * time.Second)) // b unused since before: goes; c stays
	if hs.len() != 1 || hs.take("main", "c") == nil || hs.size != 0 {
		t.Fatalf("after expiry: %d kept, %d bytes", hs.len(), hs.size)
	}
	if none := newHistory(-1); func() bool { none.put("main", "a", conv(1, "x"), at); return none.len() != 0 }() {
		t.Fatal("a history of no bytes kept one")
	}
}
