package harness_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// endHook is a Tools that runs a function the first time a turn ends,
// with the turn's lease still held.
type endHook struct {
	harness.Tools
	once sync.Once
	fn   func()
}

func (e *endHook) EndTurn(ctx context.Context, agent string) {
	e.once.Do(e.fn)
	e.Tools.EndTurn(ctx, agent)
}

// A message that joins after the turn's last answer was written, before
// its lease is let go, is answered by that turn: the turn doesn't read
// again after an answer it wrote right after what it had read, so this is
// the look it takes once the lease is let go.
func TestJoinAfterLastAnswer(t *testing.T) {
	hook := &endHook{}
	r := newRig(t, func(c *harness.Config) {
		hook.Tools = c.Tools
		c.Tools = hook
	})
	var joined error
	var steered bool
	hook.fn = func() {
		res, _, err := r.Say("telegram:8", "two", nil)
		joined, steered = err, res.Steered()
	}
	r.Model.Push(model.Response{Text: "first"}, model.Response{Text: "second"})
	res, x, err := r.Say("telegram:8", "one", nil)
	if err != nil {
		t.Fatal(err)
	}
	if joined != nil || !steered {
		t.Fatalf("the message that joined: steered %v, %v", steered, joined)
	}
	if res.Steered() {
		t.Fatalf("the turn's answer %+v", res)
	}
	reqs := r.Requests("telegram:8")
	if len(reqs) != 2 || strings.Contains(scripted.RequestText(reqs[0]), "two") || !strings.Contains(scripted.RequestText(reqs[1]), "two") {
		t.Fatalf("%d calls of the model; want the second to see the message that joined", len(reqs))
	}
	if x.Text() != "first\n\nsecond" {
		t.Fatalf("streamed %q", x.Text())
	}
	ev := r.Events("telegram:8")
	if n := count(ev, store.FinalAnswer); n != 2 {
		t.Fatalf("%d answers, want 2", n)
	}
	if harness.Waiting(ev) {
		t.Fatal("the message that joined is still waiting")
	}
	for i, e := range ev {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d numbered %d", i+1, e.Seq)
		}
	}
}
