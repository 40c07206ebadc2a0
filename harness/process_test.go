package harness_test

import (
	"context"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

// second starts another harness on r's store, as another process would,
// behind an endpoint of its own; it answers with the offline model.
func (r *rig) second(t *testing.T) (*harness.Harness, string) {
	t.Helper()
	r2 := harnesstest.New(t, func(c *harness.Config) {
		c.Home = r.Home
		c.Provider = func(model.Route) (model.Provider, error) { return r.Model, nil }
	})
	return r2.Harness, r2.URL
}

// A harness killed mid-turn leaves the conversation as far as it got;
// another on the same store finishes the turn in a task and keeps its
// answer for _link/recover.
func TestKilledMidTurn(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "never given"})
	reached, release := r.HoldNext()
	defer release()
	go r.promptAsync("telegram:20", "cut short")
	<-reached
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r.Harness.Shutdown(ctx) // killed: the turn's model call is cut off
	if ev := r.Events("telegram:20"); len(ev) != 1 || !harness.Waiting(ev) {
		t.Fatalf("events after the kill %+v", ev)
	}
	r.Model = scripted.New(model.Response{Text: "finished by another"})
	h2, url := r.second(t)
	h2.Start(testAgent)
	r.URL = url
	if a := r.recoverWait(t, false, "telegram:20"); a.Text != "finished by another" {
		t.Fatalf("kept %q", a.Text)
	}
}

// A message sent to another process sharing the store while a turn runs
// here joins that turn: answered at once as steered there, seen by the
// model here.
func TestSteerFromAnotherProcess(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "one"}, model.Response{Text: "two"})
	reached, release := r.HoldNext()
	first, x := r.promptAsync("telegram:21", "here")
	<-reached
	_, url := r.second(t)
	here := r.URL
	r.URL = url
	res, _, err := r.Say("telegram:21", "from there", nil)
	r.URL = here
	if err != nil || !res.Steered() {
		t.Fatalf("%+v, %v", res, err)
	}
	release()
	wait(t, first)
	reqs := r.Requests("telegram:21")
	if len(reqs) != 2 {
		t.Fatalf("%d calls", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Parts
	if len(last) == 0 || last[len(last)-1].Text != "from there" {
		t.Fatalf("the model's last message %+v", last)
	}
	if x.Text() != "one\n\ntwo" {
		t.Fatalf("streamed %q", x.Text())
	}
}
