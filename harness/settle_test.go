package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/log"
)

// held makes, as a turn's append hook does just before its answer's
// event is stored, an answer held while it is sent, naming event seq at
// at: what a turn killed there leaves.
func held(t *testing.T, r *rig, thread string, seq int64, at time.Time, text string) string {
	t.Helper()
	id, err := delivery.NewID(thread)
	if err != nil {
		t.Fatal(err)
	}
	k := delivery.Answer{ID: id, Thread: thread, Text: text, Seq: seq, EventTime: at}
	if err := r.Answers().Hold(t.Context(), k, false); err != nil {
		t.Fatal(err)
	}
	return id
}

// stored writes events with their own numbers and times, as a process
// that stored them before it was killed leaves them.
func stored(t *testing.T, home, thread string, events ...store.Event) {
	t.Helper()
	p, err := store.For(home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	d := log.Open(p.Chats())
	for _, e := range events {
		if err := d.Append(context.Background(), thread, e); err != nil {
			t.Fatal(err)
		}
	}
}

// isHeld says whether the answer id is still held while it is sent.
func isHeld(t *testing.T, r *rig, id string) bool {
	t.Helper()
	all, err := r.Answers().Sending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if k.ID == id {
			return true
		}
	}
	return false
}

// handedOver asks _link/recover until pred holds of all it handed over
// so far, each ask after the tasks the last started (the sweep, the turns
// it finished) have ended, then twice more, and returns all it handed
// over. Only a lease left by a killed process needs time to pass.
func handedOver(t *testing.T, r *rig, what string, pred func(all []string) bool) []string {
	t.Helper()
	var all []string
	ask := func() {
		for _, a := range r.recover(t, map[string]any{}).Answers {
			all = append(all, a.Text)
		}
		r.Harness.WaitTasks()
	}
	// Only a killed process's lease running out needs time to pass.
	testwait.For(t, 10*time.Second, what, func() bool { ask(); return pred(all) })
	ask()
	ask()
	return all
}

// The window closed: a turn killed after its answer was held but
// before its answer's event was stored leaves the held answer and its message
// unanswered. Recover doesn't hand the held answer over; the sweep finishes the
// turn, and its answer is the one handed over, once. While the killed
// process's lease lasts, the held answer is passed over, not let go.
func TestHeldWithoutEvent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration // the killed turn's lease left, 0 for none
	}{{"lease free", 0}, {"killed turn's lease", 400 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			const thread = "telegram:21"
			stored(t, r.Home, thread, store.Event{Seq: 1, Time: time.Now().UTC(), Kind: store.KindMessage, Text: "hi"})
			if tc.lease > 0 {
				p, _ := store.For(r.Home, testAgent)
				if _, err := log.Open(p.Chats()).Lease(t.Context(), thread, "killed-process", tc.lease); err != nil {
					t.Fatal(err)
				}
			}
			id := held(t, r, thread, 2, time.Now().UTC(), "never stored")
			r.Model.Push(model.Response{Text: "finished by the sweep"})
			for _, a := range r.recover(t, map[string]any{}).Answers {
				if a.Text == "never stored" {
					t.Fatalf("recovered %+v: the held answer never stored", a)
				}
			}
			if tc.lease > 0 && !isHeld(t, r, id) {
				t.Fatal("let go while a turn's lease lasts")
			}
			all := handedOver(t, r, "the sweep's answer", func(all []string) bool {
				return len(all) > 0 && !isHeld(t, r, id)
			})
			if len(all) != 1 || all[0] != "finished by the sweep" {
				t.Fatalf("handed over %q: want the sweep's answer once", all)
			}
			ev := r.Events(thread)
			if len(ev) != 2 || ev[1].Text != "finished by the sweep" {
				t.Fatalf("events %+v", ev)
			}
		})
	}
}

// A turn killed after its answer's event was stored, before the prompt's
// response: the held answer is handed over once, and the sweep, finding the
// message answered, answers nothing again.
func TestHeldWithEvent(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:22"
	at := time.Now().UTC()
	stored(t, r.Home, thread,
		store.Event{Seq: 1, Time: at.Add(-time.Second), Kind: store.KindMessage, Text: "hi"},
		store.Event{Seq: 2, Time: at, Kind: store.KindAnswer, Text: "stored, never told", Seen: 1})
	id := held(t, r, thread, 2, at, "stored, never told")
	all := handedOver(t, r, "the held answer", func(all []string) bool { return len(all) > 0 })
	if len(all) != 1 || all[0] != "stored, never told" {
		t.Fatalf("handed over %q: want the held answer once", all)
	}
	if isHeld(t, r, id) {
		t.Error("still held after it was handed over")
	}
	if err := r.Harness.Sweep(t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	if n := len(r.Model.Requests()); n != 0 {
		t.Fatalf("the sweep answered again: %d model calls", n)
	}
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v after", got)
	}
}

// A held answer whose number another event took (the sweep's answer, or any
// event that isn't an answer at its time) is let go, never handed over.
func TestHeldNumberTaken(t *testing.T) {
	r := newRig(t)
	at := time.Now().UTC()
	stored(t, r.Home, "telegram:23",
		store.Event{Seq: 1, Time: at.Add(-time.Second), Kind: store.KindMessage, Text: "hi"},
		store.Event{Seq: 2, Time: at, Kind: store.KindAnswer, Text: "another turn's", Seen: 1})
	stored(t, r.Home, "telegram:24",
		store.Event{Seq: 1, Time: at.Add(-time.Second), Kind: store.KindMessage, Text: "hi"},
		store.Event{Seq: 2, Time: at, Kind: store.KindModelSet, Model: "offline"},
		store.Event{Seq: 3, Time: at.Add(time.Second), Kind: store.KindAnswer, Text: "answered", Seen: 2})
	one := held(t, r, "telegram:23", 2, at.Add(time.Microsecond), "the killed turn's")
	two := held(t, r, "telegram:24", 2, at, "not an answer's")
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v: held answers whose number another event took", got)
	}
	if isHeld(t, r, one) || isHeld(t, r, two) {
		t.Error("an answer held whose number another event took is still held")
	}
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v after", got)
	}
}

// A live turn's held answer, its event not stored yet, in a second harness on
// the same home: the first one's Recover neither hands it over nor lets
// it go while the turn holds the lease, blocked in the model. Once that
// turn stored its own answer at the number, the held answer is let go.
func TestHeldLiveElsewhere(t *testing.T) {
	r := newRig(t)
	other := newRig(t, func(c *harness.Config) { c.Home = r.Home })
	const thread = "telegram:25"
	other.Model.Push(model.Response{Text: "the live turn's"})
	reached, release := other.HoldNext()
	defer release()
	type result struct {
		ans acp.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := other.Harness.Prompt(context.Background(), acp.Prompt{Agent: testAgent, Thread: thread, Blocks: []acp.Block{{Type: "text", Text: "hi"}}}, &textStream{})
		done <- result{ans, err}
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never reached the model")
	}
	id := held(t, r, thread, 2, time.Now().UTC(), "about to be stored")
	for range 2 {
		if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
			t.Fatalf("recovered %+v while a turn elsewhere runs", got)
		}
		if !isHeld(t, r, id) {
			t.Fatal("let go while a turn elsewhere holds the lease")
		}
	}
	release()
	res := <-done
	if res.err != nil || res.ans.Delivered == nil {
		t.Fatalf("prompt: %+v, %v", res.ans, res.err)
	}
	res.ans.Delivered()
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v after the turn delivered its answer", got)
	}
	if isHeld(t, r, id) {
		t.Error("the held answer is still there after another answer took its number")
	}
	if n := len(r.Model.Requests()); n != 0 {
		t.Errorf("the first harness answered too: %d model calls", n)
	}
}

// The append's hook: the hold names the number and time its answer's
// event took, even when another writer took the number first and the
// append tried again.
func TestHeldNamesItsEvent(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:26"
	r.Model.Push(model.Response{Text: "after a retry"})
	reached, release := r.HoldNext()
	defer release()
	type result struct {
		ans acp.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := r.Harness.Prompt(context.Background(), acp.Prompt{Agent: testAgent, Thread: thread, Blocks: []acp.Block{{Type: "text", Text: "hi"}}}, &textStream{})
		done <- result{ans, err}
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never reached the model")
	}
	// Number 2 taken by another writer while the model answers.
	stored(t, r.Home, thread, store.Event{Seq: 2, Time: time.Now().UTC(), Kind: store.KindModelSet, Model: "offline"})
	release()
	res := <-done
	if res.err != nil || res.ans.Delivered == nil {
		t.Fatalf("prompt: %+v, %v", res.ans, res.err)
	}
	ev := r.Events(thread)
	if len(ev) != 3 || ev[2].Kind != store.KindAnswer {
		t.Fatalf("events %+v", ev)
	}
	all, err := r.Answers().Sending(t.Context())
	if err != nil || len(all) != 1 {
		t.Fatalf("held %+v, %v: want one", all, err)
	}
	if k := all[0]; k.Seq != 3 || !k.EventTime.Equal(ev[2].Time) || k.Text != "after a retry" {
		t.Fatalf("kept %+v: want event 3 at %v", k, ev[2].Time)
	}
	res.ans.Delivered()
	if all, err := r.Answers().Sending(t.Context()); err != nil || len(all) != 0 {
		t.Fatalf("held after delivered %+v, %v", all, err)
	}
}
