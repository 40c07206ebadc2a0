package window

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abcd", 1},
		{"abcde", 2},
		{"你好", 2},   // one a character, not a byte
		{"hi 👋", 2}, // "hi " is one, the emoji one
		{strings.Repeat("x", 4000), 1000},
	} {
		if got := Tokens(tc.in); got != tc.want {
			t.Errorf("Tokens(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	d := Defaults()
	for _, tc := range []struct {
		s     Settings
		model int
		want  int
	}{
		{d, 1000000, DefaultMax},                        // Link's max held to itself
		{d, 40960, 40960},                               // and to the model's window
		{Settings{Max: 8000}, 4096, 4096},               // Link's, held
		{Settings{Max: 8000, MaxSet: true}, 4096, 8000}, // yours, as set
	} {
		if got := tc.s.Size(tc.model); got != tc.want {
			t.Errorf("%+v.Size(%d) = %d, want %d", tc.s, tc.model, got, tc.want)
		}
	}
	if got := d.AnswerTokens(100000, 0, 8000); got != 8000 {
		t.Errorf("answer held to the model's longest: %d", got)
	}
	if got := d.AnswerTokens(100000, 0, 0); got != 12500 {
		t.Errorf("answer's share: %d", got)
	}
	if got := d.AnswerTokens(100000, 3000, 8000); got != 3000 {
		t.Errorf("[model] answer: %d", got)
	}
	if got := d.Room(100000, 12500, 2000); got != 100000-12500-2000-5000 {
		t.Errorf("room %d", got)
	}
}

func TestDue(t *testing.T) {
	d := Defaults()
	if d.Due(749, 1000) || !d.Due(750, 1000) {
		t.Error("compact_at 0.75 of 1000")
	}
	d.Never = true
	if d.Due(5000, 1000) {
		t.Error("never compacts")
	}
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// convo makes a conversation of n turns, each a message of the owner's
// and an answer, each event of about tokens tokens.
func convo(n, tokens int) []store.Event {
	var es []store.Event
	add := func(e store.Event) {
		e.Seq = int64(len(es) + 1)
		e.Time = t0.Add(time.Duration(e.Seq) * time.Second)
		es = append(es, e)
	}
	text := strings.Repeat("word ", tokens*4/5)
	for i := range n {
		add(store.Event{Kind: store.KindMessage, Header: "[h]", Text: fmt.Sprint(i, text)})
		add(store.Event{Kind: store.KindAnswer, Text: text})
	}
	return es
}

func TestLatest(t *testing.T) {
	es := convo(3, 10)
	if cp, ok := Latest(es); !ok || cp.Start != 1 || !cp.StartTime.Equal(es[0].Time) {
		t.Errorf("no checkpoint from the first: %+v %v", cp, ok)
	}
	if _, ok := Latest(es[2:]); ok {
		t.Error("found a start in events not from the first")
	}
	es[3].Window = &store.Checkpoint{Start: 3, TokensBefore: 20}
	if cp, ok := Latest(es[2:]); !ok || cp.Start != 3 {
		t.Errorf("the answer's checkpoint: %+v %v", cp, ok)
	}
}

// TestNextFixed: the drop point is the conversation's, the same however
// much of it came after, and half the room leaves at it.
func TestNextFixed(t *testing.T) {
	es := convo(50, 20)
	room := 400
	cp := store.Checkpoint{Start: 1}
	var first store.Checkpoint
	for n := 20; n <= len(es); n += 10 {
		next, ok := Next(es[:n], cp, room)
		if !ok {
			continue
		}
		if first.Start == 0 {
			first = next
		}
		if next != first {
			t.Fatalf("with %d events the drop is %+v, with fewer %+v", n, next, first)
		}
	}
	if first.Start == 0 || first.TokensBefore < int64(room/2) || first.TokensBefore > int64(room/2+50) {
		t.Fatalf("drop %+v, want about half of %d before it", first, room)
	}
	if es[first.Start-1].Kind != store.KindMessage && es[first.Start-1].Kind != store.KindAnswer {
		t.Errorf("drop at a %s", es[first.Start-1].Kind)
	}
	// From there, the next is the same half again.
	second, ok := Next(es, first, room)
	if !ok || second.TokensBefore-first.TokensBefore < int64(room/2) {
		t.Errorf("second drop %+v after %+v", second, first)
	}
}

func TestNextCarries(t *testing.T) {
	es := convo(20, 20)
	on := true
	es[2] = store.Event{Seq: 3, Kind: store.KindModelSet, Model: "openai/gpt-5"}
	es[4] = store.Event{Seq: 5, Kind: store.KindChatSet, Verbose: &on}
	next, ok := Next(es, store.Checkpoint{Start: 1}, 200)
	if !ok || next.Model != "openai/gpt-5" || next.Verbose == nil || !*next.Verbose {
		t.Errorf("carried %+v", next)
	}
}

// TestNoStartInARound: a window never starts at a tool's answer or a
// message that joined a turn.
func TestNoStartInARound(t *testing.T) {
	es := []store.Event{
		{Seq: 1, Kind: store.KindMessage, Text: strings.Repeat("a", 400)},
		{Seq: 2, Kind: store.KindAnswer, Calls: []store.ToolCall{{ID: "c", Name: "x__y", Input: "{}"}}},
		{Seq: 3, Kind: store.KindToolResult, CallID: "c", Text: strings.Repeat("r", 400)},
		{Seq: 4, Kind: store.KindMessage, Steered: true, Text: "also"},
		{Seq: 5, Kind: store.KindAnswer, Text: "done"},
	}
	next, ok := Next(es, store.Checkpoint{Start: 1}, 200)
	if !ok || next.Start != 2 {
		t.Errorf("drop %+v %v, want at the answer 2", next, ok)
	}
	next, ok = Next(es, next, 200)
	if !ok || next.Start != 5 {
		t.Errorf("drop %+v %v, want past the tool's answer and the joined message, at 5", next, ok)
	}
}

func TestOfSummary(t *testing.T) {
	es := convo(10, 10)
	sum := store.Event{Seq: int64(len(es) + 1), Kind: store.KindSummary, Text: "so far", Covers: &store.Range{From: 1, To: 6}}
	es = append(es, sum)
	v := Of(es, store.Checkpoint{Start: 7})
	if v.Summary == nil || v.Summary.Text != "so far" || v.Events[0].Seq != 7 || v.Events[len(v.Events)-1].Seq != 20 {
		t.Fatalf("view %+v", v)
	}
	want := EventTokens(sum)
	for _, e := range es[6:20] {
		want += EventTokens(e)
	}
	if v.Tokens != want {
		t.Errorf("tokens %d, want %d", v.Tokens, want)
	}
	if v := Of(es, store.Checkpoint{Start: 9}); v.Summary != nil {
		t.Error("a summary that stands for less than what left starts the window")
	}
}

func TestFitAndLeaving(t *testing.T) {
	es := convo(100, 20) // about 4,000 tokens
	room := 1000
	cp, moved := Fit(es, store.Checkpoint{Start: 1}, room, room/8)
	if !moved {
		t.Fatal("didn't move")
	}
	if v := Of(es, cp); v.Tokens+room/8 > room || v.Tokens < room/4 {
		t.Errorf("stays %d tokens of room %d", v.Tokens, room)
	}
	sum, leaving := Leaving(es, store.Checkpoint{Start: 1}, cp, room/2)
	n := 0
	for _, e := range leaving {
		n += EventTokens(e)
	}
	if sum != nil || n > room/2 || n < room/2-100 || leaving[len(leaving)-1].Seq != cp.Start-1 {
		t.Errorf("leaving %d tokens, to %d (start %d)", n, leaving[len(leaving)-1].Seq, cp.Start)
	}
	if !canStart(leaving[0]) {
		t.Errorf("leaving starts at a %s", leaving[0].Kind)
	}
}

func TestAsk(t *testing.T) {
	a := Ask("What's on\nmy calendar?", true, 300)
	for _, w := range []string{"memory__remember", "call nothing else", "> What's on\n> my calendar?", "300 words"} {
		if !strings.Contains(a, w) {
			t.Errorf("ask lacks %q:\n%s", w, a)
		}
	}
	long := Ask(strings.Repeat("é", 500), false, 100)
	if strings.Contains(long, "memory__remember") || !strings.Contains(long, strings.Repeat("é", quoted)+"...") || strings.Contains(long, strings.Repeat("é", quoted+1)) {
		t.Errorf("long ask:\n%s", long)
	}
}

func TestOwner(t *testing.T) {
	if Owner([]store.Event{{Kind: store.KindMessage, From: "schedule:daily"}, {Kind: store.KindAnswer}}) {
		t.Error("a schedule's message is the owner's")
	}
	if !Owner([]store.Event{{Kind: store.KindMessage, From: "schedule:daily"}, {Kind: store.KindMessage}}) {
		t.Error("the owner's message isn't")
	}
}

// TestOfShares: a window whose every event from its start is seen is
// those events themselves, capped, so an append to it copies and leaves
// the conversation's alone; one with an event the model doesn't see
// among them is a copy without it, as is one with an event before its
// start after one past it.
func TestOfShares(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	events := []store.Event{
		{Seq: 1, Time: t0, Kind: store.KindMessage, Text: "one"},
		{Seq: 2, Time: t0, Kind: store.KindAnswer, Text: "two"},
		{Seq: 3, Time: t0, Kind: store.KindMessage, Text: "three"},
		{Seq: 4, Time: t0, Kind: store.KindAnswer, Text: "four"},
	}
	events = append(make([]store.Event, 0, 8), events...) // room to append into
	v := Of(events, store.Checkpoint{Start: 2})
	if len(v.Events) != 3 || &v.Events[0] != &events[1] || cap(v.Events) != 3 {
		t.Fatalf("window %+v: want events 2 to 4 themselves, capped", v.Events)
	}
	if want := EventTokens(events[1]) + EventTokens(events[2]) + EventTokens(events[3]); v.Tokens != want {
		t.Errorf("tokens %d, want %d", v.Tokens, want)
	}
	_ = append(v.Events, store.Event{Seq: 5, Text: "five"})
	if events[:5][4].Text != "" {
		t.Errorf("an append to the window wrote into the conversation's events")
	}
	mixed := append(append([]store.Event{}, events...), store.Event{Seq: 5, Time: t0, Kind: store.KindSummary, Covers: &store.Range{From: 1, To: 3}})
	v = Of(mixed, store.Checkpoint{Start: 2})
	if len(v.Events) != 3 || &v.Events[0] == &mixed[1] || v.Summary != nil {
		t.Errorf("window %+v, summary %v: want a copy of events 2 to 4", v.Events, v.Summary)
	}
	unsorted := []store.Event{events[2], events[0], events[3]}
	v = Of(unsorted, store.Checkpoint{Start: 2})
	if len(v.Events) != 2 || v.Events[0].Seq != 3 || v.Events[1].Seq != 4 {
		t.Errorf("window %+v: want events 3 and 4", v.Events)
	}
}
