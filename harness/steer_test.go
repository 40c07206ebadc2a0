package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// promptAsync sends a message and returns a channel of its answer.
func (r *rig) promptAsync(thread, text string) (<-chan result, *exchange) {
	ctx, cancel := context.WithTimeout(r.T.Context(), 20*time.Second)
	x := r.Dial(ctx, thread)
	out := make(chan result, 1)
	go func() {
		defer cancel()
		defer x.Client.Close()
		res, err := x.Client.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
		out <- result{res, err}
	}()
	return out, x
}

type result struct {
	res acp.PromptResult
	err error
}

func wait(t *testing.T, ch <-chan result) acp.PromptResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.res
	case <-time.After(15 * time.Second):
		t.Fatal("no answer")
	}
	return acp.PromptResult{}
}

// A message that joins a running turn is stored, answered at once as
// steered, and seen by the model at the turn's next round; the turn's one
// answer answers both.
func TestSteer(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "looking", Calls: []model.ToolCall{{Name: "memory__search"}}}, model.Response{Text: "both done"})
	reached, release := r.HoldNext()
	first, x := r.promptAsync("telegram:5", "find my keys")
	<-reached
	res, _, err := r.Say("telegram:5", "and my wallet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Steered() {
		t.Fatalf("a message joining a running turn answered %+v, not steered", res)
	}
	release()
	got := wait(t, first)
	if got.Steered() || got.StopReason != acp.StopEndTurn {
		t.Fatalf("the turn's answer %+v", got)
	}
	reqs := r.Requests("telegram:5")
	if len(reqs) != 2 || strings.Contains(scripted.RequestText(reqs[0]), "wallet") || !strings.Contains(scripted.RequestText(reqs[1]), "and my wallet") {
		t.Fatalf("the model didn't see the message at the next round: %d calls", len(reqs))
	}
	ev := r.Events("telegram:5")
	if n := count(ev, store.FinalAnswer); n != 1 {
		t.Fatalf("%d answers, want one", n)
	}
	if n := count(ev, func(e store.Event) bool { return e.Kind == store.KindMessage && e.Steered }); n != 1 {
		t.Fatalf("%d steered messages", n)
	}
	if x.Text() != "looking\n\nboth done" {
		t.Fatalf("streamed %q", x.Text())
	}
	// The message joined while the model answered, unseen by it, so it is
	// read after that answer: after its call's result.
	msgs := reqs[1].Messages
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3: %+v", len(msgs), msgs)
	}
	want := []model.Part{{Kind: model.KindToolResult, ID: "call_1_0", Text: "memory__search found {} in telegram:5"}, model.Text(senderHeader), model.Text("and my wallet")}
	if diff := cmp.Diff(want, headerAt(t, msgs[2].Parts, 1)); diff != "" {
		t.Fatalf("the last message (-want +got):\n%s", diff)
	}
	if ev[2].Seen != 1 || !harness.Waiting(ev[:len(ev)-1]) || harness.Waiting(ev) {
		t.Fatalf("answers don't say what they saw: %+v", ev)
	}
}

// A message that joins after the last round of calls (the turn's model
// answering without calls) is still seen: the model is asked again, even
// past the last round of calls.
func TestSteerPastLastRound(t *testing.T) {
	r := newRig(t, func(c *harness.Config) { c.MaxRounds = 1 })
	r.Model.Push(model.Response{Calls: []model.ToolCall{{Name: "memory__search"}}}, model.Response{Text: "first"}, model.Response{Text: "second"})
	// Hold the second call, the one told to call nothing.
	reached, release := r.HoldCall(2)
	first, x := r.promptAsync("telegram:6", "one")
	<-reached
	res, _, err := r.Say("telegram:6", "two", nil)
	if err != nil || !res.Steered() {
		t.Fatalf("%+v, %v", res, err)
	}
	release()
	wait(t, first)
	reqs := r.Requests("telegram:6")
	if len(reqs) != 3 || reqs[2].ToolChoice != model.ToolNone || !strings.Contains(scripted.RequestText(reqs[2]), "two") {
		t.Fatalf("%d calls; the last %+v", len(reqs), reqs[len(reqs)-1].ToolChoice)
	}
	if x.Text() != "first\n\nsecond" {
		t.Fatalf("streamed %q", x.Text())
	}
}

// A turn runs to its end when its caller goes; its answer is kept and
// handed over once by a single-phase recover, and in two phases until
// done lets it go.
func TestCallerGone(t *testing.T) {
	for _, twoPhase := range []bool{false, true} {
		r := newRig(t)
		r.Model.Push(model.Response{Text: "answered after you left"})
		reached, release := r.HoldNext()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		x := r.Dial(ctx, "telegram:9")
		go x.Client.Prompt(ctx, "telegram:9", []acp.Block{{Type: "text", Text: "slow one"}}, nil)
		<-x.Taken
		<-reached
		x.Client.Close()
		release()
		cancel()
		ans := r.recoverWait(t, twoPhase, "telegram:9")
		if ans.Text != "answered after you left" {
			t.Fatalf("kept %q", ans.Text)
		}
		if twoPhase {
			if ans.ID == "" {
				t.Fatal("no id in two phases")
			}
			again := r.recover(t, map[string]any{"two_phase": true})
			if len(again.Answers) != 1 || again.Answers[0].ID != ans.ID {
				t.Fatalf("not handed over again before done: %+v", again)
			}
			if done := r.recover(t, map[string]any{"done": []string{ans.ID, "nope~1"}}); len(done.Answers) != 0 {
				t.Fatalf("done answered %+v", done)
			}
		}
		if after := r.recover(t, map[string]any{}); len(after.Answers) != 0 {
			t.Fatalf("handed over twice: %+v", after)
		}
		if n := count(r.Events("telegram:9"), store.FinalAnswer); n != 1 {
			t.Fatalf("%d answers", n)
		}
	}
}

// recover asks _link/recover over the endpoint.
func (r *rig) recover(t *testing.T, params any) recoverResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	x := r.Dial(ctx, "default")
	defer x.Client.Close()
	raw, err := x.Client.Conn().Call(ctx, "_link/recover", params)
	if err != nil {
		t.Fatal(err)
	}
	var res recoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

type recoverResult struct {
	Answers []struct{ ID, Thread, Text string }
}

// recoverWait asks until an answer of thread is handed over.
func (r *rig) recoverWait(t *testing.T, twoPhase bool, thread string) struct{ ID, Thread, Text string } {
	t.Helper()
	params := map[string]any{}
	if twoPhase {
		params["two_phase"] = true
	}
	var got struct{ ID, Thread, Text string }
	testwait.For(t, 10*time.Second, "an answer of "+thread+" handed over", func() bool {
		for _, a := range r.recover(t, params).Answers {
			if a.Thread == thread {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

// A message of lnk agent chat send (a link: thread) that joins a running
// turn gets that turn's answer kept for it: the first kept in the thread
// after it was sent, left kept by a single-phase recover.
func TestSteerLinkThread(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "the list is long"}, model.Response{Text: "and the other"})
	reached, release := r.HoldNext()
	first, _ := r.promptAsync("link:notes", "read me the list")
	<-reached
	sent := time.Now()
	res, _, err := r.Say("link:notes", "and the other list", nil)
	if err != nil || !res.Steered() {
		t.Fatalf("%+v, %v", res, err)
	}
	release()
	wait(t, first)
	// Kept by the process that told it steered, once the turn let go.
	if k := r.recoverWait(t, true, "link:notes"); k.Text != "the list is long\n\nand the other" {
		t.Fatalf("kept for the message: %+v", k)
	}
	if got := r.recover(t, map[string]any{}); len(got.Answers) != 0 {
		t.Fatalf("a single-phase recover took %+v", got)
	}
	kept, err := r.Answers().Pending(t.Context())
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept: %+v, %v; want the one for the message", kept, err)
	}
	if k := kept[0]; k.Thread != "link:notes" || !k.ForChat || k.At.Before(sent) || k.Text != "the list is long\n\nand the other" {
		t.Fatalf("kept for the message: %+v; want it for chat, kept after %v", k, sent)
	}
}
