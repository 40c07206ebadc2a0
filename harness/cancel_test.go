package harness_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/transcript"
)

// lastEvent is thread's last event.
func (r *rig) lastEvent(thread string) store.Event {
	r.T.Helper()
	ev := r.Events(thread)
	if len(ev) == 0 {
		r.T.Fatalf("%s has no events", thread)
	}
	return ev[len(ev)-1]
}

// endAsked says whether thread's folder holds an end asked.
func (r *rig) endAsked(thread string) bool {
	r.T.Helper()
	_, ok, err := r.FolderFiles().EndAsked(r.T.Context(), thread)
	if err != nil {
		r.T.Fatal(err)
	}
	return ok
}

// session/cancel while the model streams cuts its stream: the prompt is
// answered cancelled, the turn's last answer is what streamed and a note
// saying it was stopped (streamed too, and in the copy), a message that
// joined the turn is answered by it with no new round, the lease and the
// end asked are let go, and the next message runs a turn as any other.
func TestCancelMidStream(t *testing.T) {
	r := newRig(t)
	r.Model.Delay = 400 * time.Millisecond
	r.Model.Push(model.Response{Text: "first part, second part, third part"})
	const thread = "telegram:81"
	first, x := r.promptAsync(thread, "write me a long story")
	testwait.For(t, 10*time.Second, "the first piece streamed", func() bool { return x.Text() != "" })
	res, _, err := r.Say(thread, "and make it short", nil)
	if err != nil || !res.Steered() {
		t.Fatalf("a message joining the turn: %+v, %v", res, err)
	}
	if err := x.Client.Cancel(t.Context(), thread); err != nil {
		t.Fatal(err)
	}
	got := wait(t, first)
	if got.StopReason != acp.StopCancelled {
		t.Fatalf("stop reason %q, want cancelled", got.StopReason)
	}
	last := r.lastEvent(thread)
	if !store.FinalAnswer(last) || !strings.HasSuffix(last.Text, "\n\n"+harness.StopNote) || !strings.HasPrefix(last.Text, "first") || strings.Contains(last.Text, "third part") {
		t.Fatalf("the stopped answer %+v", last)
	}
	if x.Text() != last.Text {
		t.Fatalf("streamed %q, stored %q", x.Text(), last.Text)
	}
	if len(r.Requests(thread)) != 1 || harness.Waiting(r.Events(thread)) {
		t.Fatalf("%d model calls; the message that joined is still to answer: %v", len(r.Requests(thread)), harness.Waiting(r.Events(thread)))
	}
	if r.endAsked(thread) {
		t.Fatal("the end asked is still kept after the turn ended")
	}
	copyFile, _ := r.FolderFiles().Paths.ConversationFile(thread, transcript.File)
	if b, err := os.ReadFile(copyFile); err != nil || !strings.Contains(string(b), harness.StopNote) {
		t.Fatalf("the copy %q, %v", b, err)
	}

	r.Model.Delay = 0
	r.Model.Push(model.Response{Text: "a short one"})
	res, x2, err := r.Say(thread, "go on", nil)
	if err != nil || res.StopReason != acp.StopEndTurn || res.Steered() || x2.Text() != "a short one" {
		t.Fatalf("the next message: %+v %q, %v", res, x2.Text(), err)
	}
}

// A turn asked to end by another process sharing the store (a second
// harness on the same home) sees the end file at its next round: the
// tool call running finishes and its answer is kept, the call is never
// made twice, and the turn ends with the note, no new model round.
func TestCancelFromAnotherProcess(t *testing.T) {
	r := newRig(t)
	other := newRig(t, func(c *harness.Config) { c.Home = r.Home })
	gate := make(chan struct{})
	r.Tools.Hold(gate)
	r.Model.Push(model.Response{Text: "Looking.", Calls: []model.ToolCall{{ID: "call_a", Name: "memory__search", Input: `{"q":"keys"}`}}}, model.Response{Text: "never asked"})
	const thread = "telegram:82"
	first, x := r.promptAsync(thread, "find my keys")
	testwait.For(t, 10*time.Second, "the tool call to start", func() bool { return r.Tools.Count("call_a") == 1 })
	if err := other.Harness.Cancel(t.Context(), testAgent, thread); err != nil {
		t.Fatal(err)
	}
	if !r.endAsked(thread) {
		t.Fatal("the cancel kept no end asked")
	}
	close(gate)
	got := wait(t, first)
	if got.StopReason != acp.StopCancelled {
		t.Fatalf("stop reason %q, want cancelled", got.StopReason)
	}
	ev := r.Events(thread)
	results := 0
	for _, e := range ev {
		if e.Kind == store.KindToolResult {
			results++
			if e.IsError || !strings.Contains(e.Text, "keys") {
				t.Fatalf("the running call didn't finish: %+v", e)
			}
		}
	}
	last := ev[len(ev)-1]
	if results != 1 || last.Text != harness.StopNote || len(last.Calls) != 0 {
		t.Fatalf("%d results; last %+v", results, last)
	}
	if r.Tools.Count("call_a") != 1 || r.Model.Left() != 1 || len(r.Requests(thread)) != 1 {
		t.Fatalf("call made %d times, %d model calls", r.Tools.Count("call_a"), len(r.Requests(thread)))
	}
	if x.Text() != "Looking.\n\n"+harness.StopNote {
		t.Fatalf("streamed %q", x.Text())
	}
	if r.endAsked(thread) {
		t.Fatal("the end asked is still kept after the turn ended")
	}
}

// A cancel while a tool call runs here lets the call finish, its answer
// kept, and ends the turn before another model round.
func TestCancelDuringCall(t *testing.T) {
	r := newRig(t)
	gate := make(chan struct{})
	r.Tools.Hold(gate)
	r.Model.Push(model.Response{Calls: []model.ToolCall{{ID: "call_b", Name: "memory__search"}}}, model.Response{Text: "never asked"})
	const thread = "telegram:83"
	first, x := r.promptAsync(thread, "look")
	testwait.For(t, 10*time.Second, "the tool call to start", func() bool { return r.Tools.Count("call_b") == 1 })
	if err := x.Client.Cancel(t.Context(), thread); err != nil {
		t.Fatal(err)
	}
	// The call's context isn't the caller's: it runs on, past the end
	// asked.
	testwait.For(t, 10*time.Second, "the end asked", func() bool { return r.endAsked(thread) })
	close(gate)
	if got := wait(t, first); got.StopReason != acp.StopCancelled {
		t.Fatalf("stop reason %q, want cancelled", got.StopReason)
	}
	ev := r.Events(thread)
	if n := count(ev, func(e store.Event) bool { return e.Kind == store.KindToolResult && !e.IsError }); n != 1 {
		t.Fatalf("%d answered calls, want the one that ran: %+v", n, ev)
	}
	if last := ev[len(ev)-1]; last.Text != harness.StopNote || r.Model.Left() != 1 || r.Tools.Count("call_b") != 1 {
		t.Fatalf("last %+v; %d answers left", last, r.Model.Left())
	}
}

// An end asked before the turn's message was stored (a cancel when
// nothing ran, left behind) isn't that turn's: it is ignored and cleared.
// A cancel of a thread with no turn is fine, and of one with no
// conversation writes nothing.
func TestCancelStale(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:84"
	r.Model.Push(model.Response{Text: "one"}, model.Response{Text: "two"}, model.Response{Text: "three"})
	if _, _, err := r.Say(thread, "hello", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Harness.Cancel(t.Context(), testAgent, thread); err != nil {
		t.Fatalf("a cancel with no turn running: %v", err)
	}
	if !r.endAsked(thread) {
		t.Fatal("the cancel kept no end asked")
	}
	res, x, err := r.Say(thread, "again", nil)
	if err != nil || res.StopReason != acp.StopEndTurn || x.Text() != "two" {
		t.Fatalf("the next turn after a cancel of none: %+v %q, %v", res, x.Text(), err)
	}
	if r.endAsked(thread) {
		t.Fatal("a stale end asked was left")
	}
	// One asked long before, by another process's clock.
	if err := r.FolderFiles().AskEnd(t.Context(), thread, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if res, x, err := r.Say(thread, "and again", nil); err != nil || res.StopReason != acp.StopEndTurn || x.Text() != "three" {
		t.Fatalf("a turn after an old end asked: %+v %q, %v", res, x.Text(), err)
	}

	if err := r.Harness.Cancel(t.Context(), testAgent, "telegram:85"); err != nil {
		t.Fatalf("a cancel of a thread with no conversation: %v", err)
	}
	dir, _ := r.FolderFiles().Paths.Conversation("telegram:85")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a cancel of no conversation made its folder: %v", err)
	}
	if err := r.Harness.Cancel(t.Context(), testAgent, "not a thread"); err == nil {
		t.Fatal("a cancel of a bad thread id: nil error")
	}
}

// A turn nobody waits for any more (its caller gone) that is asked to end
// keeps its stopped answer for _link/recover, as any other.
func TestCancelCallerGone(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:86"
	r.Model.Push(model.Response{Text: "a long answer"})
	reached, release := r.HoldNext()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	x := r.Dial(ctx, thread)
	go x.Client.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: "tell me"}}, nil)
	<-x.Taken
	<-reached
	x.Client.Close()
	if err := r.Harness.Cancel(ctx, testAgent, thread); err != nil {
		t.Fatal(err)
	}
	release()
	if ans := r.recoverWait(t, false, thread); ans.Text != harness.StopNote {
		t.Fatalf("kept %q, want the note", ans.Text)
	}
	if last := r.lastEvent(thread); last.Text != harness.StopNote {
		t.Fatalf("stored %+v", last)
	}
}
