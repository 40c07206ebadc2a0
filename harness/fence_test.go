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

// A turn whose lease lapsed while its model answered (its renewals held
// back, as a paused process's are), after another process took the
// lease and answered the message the turn saw, stores no second answer
// to it: the answer it would write is refused, and the message has one.
// Two harnesses share one SQLite store; a's renewals are fired by the
// test, then no more.
func TestLapsedLeaseAnswersOnce(t *testing.T) {
	drivers := sqliteShared(t)
	const thread = "link:lapse"
	const ttl = 2 * time.Second
	renewals := &timers{}
	a := newRig(t, func(c *harness.Config) {
		c.Drivers, c.LeaseTTL, c.AfterFunc = drivers, ttl, renewals.AfterFunc
	})
	b := newRig(t, func(c *harness.Config) { c.Drivers = drivers })
	for _, r := range []*rig{a, b} {
		r.SetSettings(func(s *harness.Settings) { s.Conversations = "sqlite" })
	}
	a.Model.Push(model.Response{Text: "a saw m-1"}, model.Response{Text: "a saw m-2"})
	b.Model.Push(model.Response{Text: "b saw m-2"})

	// a's turn stores m-1 (#1) and asks its model, held.
	first, releaseFirst := a.HoldCall(1)
	defer releaseFirst()
	done, _ := a.promptAsync(thread, "m-1")
	<-first
	renewals.Fire(ttl / 3) // a's lease renewed: held for ttl from now
	// m-2, sent to b, joins a's turn (#2): b tells it steered, and
	// watches for its answer, to keep it.
	if res, _, err := b.Say(thread, "m-2", nil); err != nil || !res.Steered() {
		t.Fatalf("m-2 while a's turn runs: %+v, %v", res, err)
	}
	// a answers m-1 (#3), reads m-2 and asks its model again, held: what
	// it answers now saw m-2.
	second, releaseSecond := a.HoldCall(2)
	defer releaseSecond()
	renewals.Fire(ttl / 3)
	releaseFirst()
	<-second
	// a's lease is renewed no more: once it lapses, b takes it and
	// answers m-2 in a turn of its own.
	testwait.For(t, 3*ttl, "b's answer to m-2", func() bool {
		return slices.ContainsFunc(events(t, b, drivers, "sqlite", thread), func(e store.Event) bool { return e.Text == "b saw m-2" })
	})
	releaseSecond()
	// a's turn ends refused: what it would answer now, m-2 has already.
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "answered already") {
		t.Errorf("a's turn ended %+v, %v; want its answer refused", r.res, r.err)
	}

	ev := events(t, b, drivers, "sqlite", thread)
	var finals []string
	for _, e := range ev {
		if store.FinalAnswer(e) {
			finals = append(finals, e.Text)
		}
	}
	if want := []string{"a saw m-1", "b saw m-2"}; !slices.Equal(finals, want) {
		t.Errorf("final answers %q, want %q: m-2 answered twice", finals, want)
	}
	if harness.Waiting(ev) {
		t.Error("a message is left waiting")
	}
}
