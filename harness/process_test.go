package harness

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// second starts another harness on r's store, as another process would,
// behind an endpoint of its own; it answers with the offline model.
func (r *rig) second(t *testing.T) (*Harness, string) {
	t.Helper()
	h, err := New(Config{
		Home:     r.home,
		Drivers:  testDrivers,
		Settings: func(context.Context, store.Paths) (Settings, error) { return Settings{Model: "offline"}, nil },
		Route:    func(name string) (model.Route, error) { return model.Route{Provider: "offline", APIModel: name}, nil },
		Provider: func(model.Route) (model.Provider, error) { return r.q, nil },
		LeaseTTL: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := endpoint.New(endpoint.Config{Agents: []endpoint.Agent{{Name: testAgent, Key: r.key}}, Own: testAgent, Handler: endpoint.AgentHandler{Agent: h}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	return h, "http://" + ln.Addr().String() + contract.ACPPath
}

// A harness killed mid-turn leaves the conversation as far as it got;
// another on the same store finishes the turn in a task and keeps its
// answer for _link/recover.
func TestKilledMidTurn(t *testing.T) {
	r := newRig(t)
	r.q.Push(model.Response{Text: "never given"})
	reached, release := r.holdNext()
	defer release()
	go r.promptAsync("telegram:20", "cut short")
	<-reached
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r.h.Shutdown(ctx) // killed: the turn's model call is cut off
	if ev := r.events("telegram:20"); len(ev) != 1 || !waiting(ev) {
		t.Fatalf("events after the kill %+v", ev)
	}
	r.q = scripted.New(model.Response{Text: "finished by another"})
	h2, url := r.second(t)
	h2.Start(testAgent)
	r.url = url
	if a := r.recoverWait(t, false, "telegram:20"); a.Text != "finished by another" {
		t.Fatalf("kept %q", a.Text)
	}
}

// A message sent to another process sharing the store while a turn runs
// here joins that turn: answered at once as steered there, seen by the
// model here.
func TestSteerFromAnotherProcess(t *testing.T) {
	r := newRig(t)
	r.q.Push(model.Response{Text: "one"}, model.Response{Text: "two"})
	reached, release := r.holdNext()
	first, x := r.promptAsync("telegram:21", "here")
	<-reached
	_, url := r.second(t)
	here := r.url
	r.url = url
	res, _, err := r.say("telegram:21", "from there", nil)
	r.url = here
	if err != nil || !res.Steered() {
		t.Fatalf("%+v, %v", res, err)
	}
	release()
	wait(t, first)
	reqs := r.requests("telegram:21")
	if len(reqs) != 2 {
		t.Fatalf("%d calls", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Parts
	if len(last) == 0 || last[len(last)-1].Text != "from there" {
		t.Fatalf("the model's last message %+v", last)
	}
	if x.text() != "one\n\ntwo" {
		t.Fatalf("streamed %q", x.text())
	}
}
