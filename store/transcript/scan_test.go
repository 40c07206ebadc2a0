package transcript

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/lnk-dev/link/store"
)

// The looks at a turn's events from their end (lastFinal, after, find)
// agree with the looks from their start they replaced, on any events in
// order: messages from the owner, a person and a schedule, answers that
// saw all, some or none, answers with calls, failures, tool results, at
// any numbers with or without gaps.
func TestLooksFromTheEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 65))
	for n := range 20000 {
		events := randomEvents(r, r.IntN(40))
		if got, want := lastFinal(events), lastFinalFromStart(events); got != want {
			t.Fatalf("case %d: lastFinal %d, from the start %d: %+v", n, got, want, events)
		}
		end := int64(r.IntN(50))
		if got, want := after(events, end), afterFromStart(events, end); !slices.EqualFunc(got, want, sameSeq) || (got == nil) != (want == nil) {
			t.Fatalf("case %d: after(%d) %v, from the start %v", n, end, seqs(got), seqs(want))
		}
		e, ok := find(events, end)
		we, wok := findFromStart(events, end)
		if ok != wok || e.Seq != we.Seq || e.Kind != we.Kind {
			t.Fatalf("case %d: find(%d) %+v %v, from the start %+v %v", n, end, e, ok, we, wok)
		}
	}
}

// randomEvents are n events in order, numbered from 1 or later with
// gaps now and then.
func randomEvents(r *rand.Rand, n int) []store.Event {
	out := make([]store.Event, n)
	seq := int64(r.IntN(3))
	for i := range out {
		seq += 1 + int64(r.IntN(8)/7) // a gap one time in eight
		e := store.Event{Seq: seq}
		switch r.IntN(7) {
		case 0:
			e.Kind = store.KindMessage
		case 1:
			e.Kind, e.From = store.KindMessage, "person:telegram:7"
		case 2:
			e.Kind, e.From = store.KindMessage, "schedule:daily"
		case 3:
			e.Kind = store.KindAnswer
			e.Seen = max(0, seq-int64(r.IntN(4)))
		case 4:
			e.Kind, e.Calls = store.KindAnswer, []store.ToolCall{{ID: "c", Name: "t"}}
		case 5:
			e.Kind, e.Seen = store.KindFailure, max(0, seq-int64(r.IntN(3)))
		default:
			e.Kind = store.KindToolResult
		}
		if r.IntN(5) == 0 {
			e.Seen = 0
		}
		out[i] = e
	}
	return out
}

func sameSeq(a, b store.Event) bool { return a.Seq == b.Seq }

func seqs(events []store.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// lastFinalFromStart is lastFinal as it looked from the start.
func lastFinalFromStart(events []store.Event) int {
	last := -1
	var asked int64
	for i, e := range events {
		switch {
		case e.Kind == store.KindMessage && Includes(e):
			asked = e.Seq
		case store.FinalAnswer(e) && (e.Seen == 0 || e.Seen >= asked):
			last = i
		}
	}
	return last
}

// afterFromStart is after as it looked from the start.
func afterFromStart(turn []store.Event, end int64) []store.Event {
	for i, e := range turn {
		if e.Seq > end {
			if e.Seq != end+1 {
				return nil
			}
			for j := i + 1; j < len(turn); j++ {
				if turn[j].Seq != turn[j-1].Seq+1 {
					return nil
				}
			}
			return turn[i:]
		}
	}
	return nil
}

// findFromStart is find as it looked from the start.
func findFromStart(events []store.Event, seq int64) (store.Event, bool) {
	for _, e := range events {
		if e.Seq == seq {
			return e, true
		}
	}
	return store.Event{}, false
}

// BenchmarkTurnLooks is what an append to the copy looks at in a turn's
// window (lastFinal, find, after, as appendTo and since do), for a window
// of about 100 events and one of about 4,000: the copy ends at the answer
// before the turn's, so what is added is the turn's own message and
// answer. Looked at from the end, both cost the same.
func BenchmarkTurnLooks(b *testing.B) {
	for _, turns := range []int{50, 2000} {
		events := conversation(turns)
		end := events[len(events)-1].Seq - 2 // the answer before the last message
		b.Run(strconv.Itoa(len(events)), func(b *testing.B) {
			for b.Loop() {
				i := lastFinal(events)
				if e, ok := find(events, end); !ok || !store.FinalAnswer(e) {
					b.Fatal("no answer to add after")
				}
				if since := after(events, end); len(since) != 2 || i != len(events)-1 {
					b.Fatalf("%d to add, last answer at %d", len(since), i)
				}
			}
		})
	}
}

// conversation is turns owner's messages each with its answer.
func conversation(turns int) []store.Event {
	var out []store.Event
	for i := range turns {
		seq := int64(2*i + 1)
		out = append(out, store.Event{Seq: seq, Kind: store.KindMessage, Text: "question"},
			store.Event{Seq: seq + 1, Kind: store.KindAnswer, Text: "answer", Seen: seq})
	}
	return out
}
