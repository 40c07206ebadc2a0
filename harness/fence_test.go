package harness_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// lapseTTL is the lease of the harness whose lease lapses in the tests here.
const lapseTTL = 2 * time.Second

// A turn whose lease lapsed while its model answered (its renewals held
// back, as a paused process's are), after another process took the
// lease and answered the message the turn saw, stores no second answer
// to it: the answer it would write is refused, and the message has one.
// Two harnesses share one SQLite store; a's renewals are fired by the
// test, then no more.
func TestLapsedLeaseAnswersOnce(t *testing.T) {
	const thread = "link:lapse"
	a, b, renewals, read := lapsing(t)
	a.Model.Push(model.Response{Text: "a saw m-1"}, model.Response{Text: "a saw m-2"})
	b.Model.Push(model.Response{Text: "b saw m-2"})

	// a's turn stores m-1 (#1) and asks its model, held.
	first, releaseFirst := a.HoldCall(1)
	defer releaseFirst()
	done, _ := a.promptAsync(thread, "m-1")
	<-first
	renewals.Fire(lapseTTL / 3) // a's lease renewed: held for lapseTTL from now
	// m-2, sent to b, joins a's turn (#2): b tells it steered, and
	// watches for its answer, to keep it.
	if res, _, err := b.Say(thread, "m-2", nil); err != nil || !res.Steered() {
		t.Fatalf("m-2 while a's turn runs: %+v, %v", res, err)
	}
	// a answers m-1 (#3), reads m-2 and asks its model again, held: what
	// it answers now saw m-2.
	second, releaseSecond := a.HoldCall(2)
	defer releaseSecond()
	renewals.Fire(lapseTTL / 3)
	releaseFirst()
	<-second
	// a's lease is renewed no more: once it lapses, b takes it and
	// answers m-2 in a turn of its own.
	testwait.For(t, 3*lapseTTL, "b's answer to m-2", func() bool {
		return slices.ContainsFunc(read(thread), func(e store.Event) bool { return e.Text == "b saw m-2" })
	})
	releaseSecond()
	// a's turn ends refused: what it would answer now, m-2 has already.
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "answered already") {
		t.Errorf("a's turn ended %+v, %v; want its answer refused", r.res, r.err)
	}

	ev := read(thread)
	if finals, want := finalTexts(ev), []string{"a saw m-1", "b saw m-2"}; !slices.Equal(finals, want) {
		t.Errorf("final answers %q, want %q: m-2 answered twice", finals, want)
	}
	if harness.Waiting(ev) {
		t.Error("a message is left waiting")
	}
}

// So too when the turn whose lease lapsed read the other's answer before
// its last round (after a round of calls, made while the lease lapsed):
// what it answers then, m-2 has already, among the events it read.
func TestLapsedLeaseAnswersOnceAfterCalls(t *testing.T) {
	const thread = "link:lapse-calls"
	a, b, renewals, read := lapsing(t)
	a.Model.Push(model.Response{Text: "a looks", Calls: []model.ToolCall{{ID: "call_a", Name: "memory__search", Input: `{"q":"x"}`}}}, model.Response{Text: "a saw m-2"})
	b.Model.Push(model.Response{Text: "b saw m-2"})

	first, releaseFirst := a.HoldCall(1)
	defer releaseFirst()
	done, _ := a.promptAsync(thread, "m-1")
	<-first
	renewals.Fire(lapseTTL / 3)
	if res, _, err := b.Say(thread, "m-2", nil); err != nil || !res.Steered() {
		t.Fatalf("m-2 while a's turn runs: %+v, %v", res, err)
	}
	// a's round asks for a call, held: meanwhile its lease lapses, and b
	// answers m-2 in a turn of its own.
	gate := make(chan struct{})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	a.Tools.Hold(gate)
	renewals.Fire(lapseTTL / 3)
	releaseFirst()
	testwait.For(t, 10*time.Second, "a's call to start", func() bool { return a.Tools.Count("call_a") == 1 })
	testwait.For(t, 3*lapseTTL, "b's answer to m-2", func() bool {
		return slices.ContainsFunc(read(thread), func(e store.Event) bool { return e.Text == "b saw m-2" })
	})
	close(gate) // a reads b's answer with its call's, and asks its model again
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "answered already") {
		t.Errorf("a's turn ended %+v, %v; want its answer refused", r.res, r.err)
	}
	ev := read(thread)
	if finals, want := finalTexts(ev), []string{"b saw m-2"}; !slices.Equal(finals, want) {
		t.Errorf("final answers %q, want %q: m-2 answered twice", finals, want)
	}
	if harness.Waiting(ev) {
		t.Error("a message is left waiting")
	}
}

// lapsing starts harnesses a and b sharing one SQLite store: a's lease
// lasts lapseTTL, renewed only when the test fires renewals (lapseTTL/3); b's as
// any. read reads a thread's events from the store.
func lapsing(t *testing.T) (a, b *rig, renewals *timers, read func(thread string) []store.Event) {
	drivers := sqliteShared(t)
	renewals = &timers{}
	a = newRig(t, func(c *harness.Config) {
		c.Drivers, c.LeaseTTL, c.AfterFunc = drivers, lapseTTL, renewals.AfterFunc
	})
	b = newRig(t, func(c *harness.Config) { c.Drivers = drivers })
	for _, r := range []*rig{a, b} {
		r.SetSettings(func(s *harness.Settings) { s.Conversations = "sqlite" })
	}
	return a, b, renewals, func(thread string) []store.Event { return events(t, b, drivers, "sqlite", thread) }
}

// finalTexts is the texts of the answers among ev that end a round.
func finalTexts(ev []store.Event) []string {
	var out []string
	for _, e := range ev {
		if store.FinalAnswer(e) {
			out = append(out, e.Text)
		}
	}
	return out
}
