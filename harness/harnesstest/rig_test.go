package harnesstest

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// A message said through the rig is answered by the scripted model,
// streamed to the client and stored, its request seen by thread.
func TestRigSay(t *testing.T) {
	r := New(t)
	r.Model.Push(model.Response{Text: "hi there"})
	res, x, err := r.Say("telegram:1", "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopEndTurn || x.Text() != "hi there" {
		t.Fatalf("answered %+v, streamed %q", res, x.Text())
	}
	var kinds []store.Kind
	for _, e := range r.Events("telegram:1") {
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) < 2 || kinds[0] != store.KindMessage || kinds[len(kinds)-1] != store.KindAnswer {
		t.Fatalf("stored %v, want a message first and an answer last", kinds)
	}
	if n := len(r.Requests("telegram:1")); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// Timers run only when fired, each once, and not once stopped.
func TestTimers(t *testing.T) {
	var c Timers
	ran := 0
	c.AfterFunc(time.Second, func() { ran++ })
	stop := c.AfterFunc(time.Second, func() { ran++ })
	c.AfterFunc(time.Minute, func() { ran++ })
	if !stop() {
		t.Fatal("a timer armed couldn't be stopped")
	}
	if n := c.Fire(time.Second); n != 1 || ran != 1 {
		t.Fatalf("fired %d, ran %d, want 1 and 1", n, ran)
	}
	if n := c.Fire(time.Second); n != 0 || ran != 1 {
		t.Fatalf("fired %d again, ran %d, want none", n, ran)
	}
}
