package harness

import (
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// BenchmarkRequestMessages is a turn's messages made from the events of
// a conversation of 64 turns (a message with its header and an answer
// each), as each round of each turn makes them.
func BenchmarkRequestMessages(b *testing.B) {
	events := plainConversation(64)
	b.ReportAllocs()
	for b.Loop() {
		if ms := messages(events, true); len(ms) != 128 || len(ms[126].Parts) != 2 {
			b.Fatalf("%d messages", len(ms))
		}
	}
}

// plainConversation is a conversation of turns turns, each a message
// with its header and an answer recording the window's checkpoint.
func plainConversation(turns int) []store.Event {
	var events []store.Event
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cp := store.Checkpoint{Start: 1, StartTime: at}
	for i := range turns {
		seq := int64(2*i + 1)
		events = append(events,
			store.Event{Seq: seq, Time: at, Kind: store.KindMessage, Header: "[" + strconv.Itoa(i) + " Link, your owner]", Text: "hello"},
			store.Event{Seq: seq + 1, Time: at, Kind: store.KindAnswer, Text: "[offline model] You said: hello", Window: &cp})
	}
	return events
}

// BenchmarkWindowTurn is the window's part of a turn over a window of 100
// events and one of 10,000: the events kept from the last turn taken, the
// turn's message added, the request's messages made, its answer added,
// the window counted again (whether to summarize) and the events kept
// for the next turn. kept is the harness's way; afresh makes the window
// and its messages from every event at each turn, as before they were
// kept (window.Of's copy, the summary copied in front, buildRequest),
// counting each event again. kept's allocations and time a turn are
// about the same at both sizes; afresh's grow with the window. Every 256
// turns the window is set back to its size, untimed, its slice of
// events with room for those turns' (a conversation's slice grows by
// doubling, the same share of a turn at any size).
func BenchmarkWindowTurn(b *testing.B) {
	takes := func(model.Modality) bool { return true }
	for _, way := range []string{"kept", "afresh"} {
		for _, size := range []int{100, 10000} {
			b.Run(way+"/"+strconv.Itoa(size), func(b *testing.B) {
				base := plainConversation(size / 2)
				c := &conv{agent: "main", thread: "link:bench"}
				var hs *history
				begin := func() { // the window back at size events, kept as a turn leaves it, room for the next turns'
					hs = newHistory(DefaultKeepEvents)
					events := append(make([]store.Event, 0, len(base)+512), base...)
					r := reader{c: c, hist: hs, events: events, readTo: len(base), cp: store.Checkpoint{Start: 1, StartTime: base[0].Time}}
					r.keptMessages(r.view(r.cp), true, "offline", takes)
					r.keep(time.Now)
				}
				begin()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if i%256 == 255 {
						b.StopTimer()
						begin()
						b.StartTimer()
					}
					r := reader{c: c, hist: hs}
					r.resume()
					last := r.events[len(r.events)-1]
					msg := store.Event{Seq: last.Seq + 1, Time: last.Time, Kind: store.KindMessage, Header: "[Link, your owner]", Text: "hello"}
					if !r.follows(msg) {
						b.Fatal("the message doesn't follow the events kept")
					}
					var msgs []model.Message
					if way == "kept" {
						msgs = r.keptMessages(r.view(r.cp), true, "offline", takes)
					} else {
						r.counts = nil
						msgs = builtAsBefore(r.events, r.cp, true, takes)
					}
					if len(msgs) != len(r.events) {
						b.Fatalf("%d messages of %d events", len(msgs), len(r.events))
					}
					r.follows(store.Event{Seq: msg.Seq + 1, Time: msg.Time, Kind: store.KindAnswer, Text: "[offline model] You said: hello", Window: &r.cp})
					if way == "kept" {
						r.view(r.cp)
					} else {
						r.win = windowView{}
						r.view(r.cp)
						r.win = windowView{}
					}
					r.keep(time.Now)
				}
			})
		}
	}
}
