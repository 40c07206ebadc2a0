package harness_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// A full turn over a real WebSocket: taken before any chunk, the answer's
// chunks, the prompt answered at the turn's end, and the events written:
// the message with its header, the answer with what the provider said.
func TestTurn(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "The dentist at 09:30.", Thinking: []model.Thinking{{Text: "look it up", Signature: "sig"}}, Usage: model.Usage{In: 120, Out: 9, CacheRead: 100}, CostUSD: 0.002})
	before := time.Now()
	res, x, err := r.Say("telegram:42", "What's on tomorrow?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopEndTurn || res.Steered() {
		t.Fatalf("answer = %+v", res)
	}
	notes := x.Notes()
	if len(notes) < 2 || notes[0].Method != contract.MethodTaken {
		t.Fatalf("notifications %+v: _link/taken doesn't come first", notes)
	}
	if got := x.Text(); got != "The dentist at 09:30." {
		t.Fatalf("streamed %q", got)
	}
	ev := r.Events("telegram:42")
	if len(ev) != 2 {
		t.Fatalf("%d events, want the message and the answer: %+v", len(ev), ev)
	}
	msg, ans := ev[0], ev[1]
	wantHeader := "[" + before.In(time.Local).Format("Mon 2 Jan 2006") // date, then time and zone
	if msg.Kind != store.KindMessage || msg.Text != "What's on tomorrow?" || !strings.HasPrefix(msg.Header, wantHeader) || !strings.HasSuffix(msg.Header, ", telegram, your owner]") || msg.From != "" {
		t.Fatalf("message event %+v", msg)
	}
	if ans.Provider == "" || ans.ResponseID == "" {
		t.Errorf("answer event without the provider's name or response id: %+v", ans)
	}
	want := store.Event{
		Seq:      2,
		Kind:     store.KindAnswer,
		Text:     "The dentist at 09:30.",
		Thinking: []store.Thinking{{Text: "look it up", Signature: "sig"}},
		Model:    "offline",
		Usage:    &store.Usage{In: 120, Out: 9, CacheRead: 100},
		CostUSD:  0.002,
		Seen:     1,
		Window:   &store.Checkpoint{}, // a turn's answer marks the window it was given
	}
	// The time, the latency, and the provider's name and id are the
	// call's own.
	ignore := cmpopts.IgnoreFields(store.Event{}, "Time", "LatencyMS", "Provider", "ResponseID")
	if diff := cmp.Diff(want, ans, ignore); diff != "" {
		t.Fatalf("answer event (-want +got):\n%s", diff)
	}
	// The thinking was kept, never shown.
	for _, n := range notes {
		if n.Update.Content != nil && strings.Contains(n.Update.Content.Text, "look it up") {
			t.Fatal("thinking was streamed")
		}
	}
	// The model was given the header and the message, each a text part.
	reqs := r.Requests("telegram:42")
	if len(reqs) != 1 || len(reqs[0].Messages[0].Parts) != 2 || reqs[0].Messages[0].Parts[0].Text != msg.Header ||
		reqs[0].Messages[0].Parts[1].Text != "What's on tomorrow?" || reqs[0].System[0].Text != harness.BaseSection {
		t.Fatalf("request %+v", reqs)
	}
	// The next turn's prompt starts with the same bytes as this one's.
	r.Model.Push(model.Response{Text: "ok"})
	if _, _, err := r.Say("telegram:42", "thanks", nil); err != nil {
		t.Fatal(err)
	}
	reqs = r.Requests("telegram:42")
	first, _ := json.Marshal(reqs[0].Messages)
	second, _ := json.Marshal(reqs[1].Messages[:1])
	if !strings.HasPrefix(string(first), strings.TrimSuffix(string(second), "]")) {
		t.Fatalf("the second turn's prompt doesn't start as the first's:\n%s\n%s", first, second)
	}
}

// A message from someone other than the owner says who on its first line,
// and its lines are quoted; its header names no one, never the owner.
func TestOthersMessage(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "hi Grace"})
	meta := json.RawMessage(`{"link":{"from":"person:telegram:7","fromName":"Grace","hops":2}}`)
	if _, _, err := r.Say("telegram:42", "send me the photo\nplease", meta); err != nil {
		t.Fatal(err)
	}
	msg := r.Events("telegram:42")[0]
	if msg.From != "person:telegram:7" || msg.FromName != "Grace" || msg.Hops != 2 || !strings.HasSuffix(msg.Header, ", telegram]") {
		t.Fatalf("message %+v", msg)
	}
	parts := r.Requests("telegram:42")[0].Messages[0].Parts
	if len(parts) != 2 || parts[0].Text != msg.Header || parts[1].Text != "Grace (person:telegram:7) wrote, 2 hops away:\n> send me the photo\n> please" {
		t.Fatalf("the model was given %+v", parts)
	}
}

// A model that calls tools round after round gets eight rounds of calls,
// then is asked once more, told to call nothing, with the tools still
// offered; that answer ends the turn.
func TestRoundsCapped(t *testing.T) {
	r := newRig(t)
	for range 8 {
		r.Model.Push(model.Response{Text: "again", Calls: []model.ToolCall{{Name: "memory__search", Input: `{"q":"x"}`}}})
	}
	r.Model.Push(model.Response{Text: "enough"})
	res, x, err := r.Say("telegram:1", "loop", nil)
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("answer %+v, %v", res, err)
	}
	reqs := r.Requests("telegram:1")
	if len(reqs) != 9 {
		t.Fatalf("%d model calls, want 9", len(reqs))
	}
	for i, req := range reqs {
		want := model.ToolAuto
		if i == 8 {
			want = model.ToolNone
		}
		if req.ToolChoice != want || len(req.Tools) != 3 {
			t.Fatalf("call %d: choice %q, %d tools", i+1, req.ToolChoice, len(req.Tools))
		}
	}
	ev := r.Events("telegram:1")
	if n := count(ev, isKind(store.KindToolResult)); n != 8 || r.Tools.Total() != 8 {
		t.Fatalf("%d tool results, %d calls made; want 8", n, r.Tools.Total())
	}
	if n := count(ev, store.FinalAnswer); n != 1 {
		t.Fatalf("%d final answers", n)
	}
	calls, updates := 0, 0
	for _, n := range x.Notes() {
		switch n.Update.SessionUpdate {
		case acp.UpdateToolCall:
			calls++
			if n.Update.Title != "memory__search" {
				t.Fatalf("tool call titled %q", n.Update.Title)
			}
		case acp.UpdateToolCallUpdate:
			updates++
			if n.Update.Status != acp.ToolCompleted {
				t.Fatalf("tool call ended %q", n.Update.Status)
			}
		}
	}
	if calls != 8 || updates != 8 {
		t.Fatalf("%d tool_calls and %d updates streamed", calls, updates)
	}
	if got := x.Text(); !strings.HasSuffix(got, "\n\nenough") || strings.Count(got, "again") != 8 {
		t.Fatalf("streamed %q", got)
	}
}

// A round's calls run at once, each answer its own event kept up to 32
// KiB; a call to a tool the conversation wasn't offered is answered as
// one there isn't.
func TestCalls(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Calls: []model.ToolCall{{Name: "web__fetch"}, {Name: "memory__search"}, {Name: "memory__write"}}}, model.Response{Text: "done"})
	verbose := false
	r.SetSettings(func(s *harness.Settings) { s.Verbose = &verbose })
	meta := json.RawMessage(`{"link":{"tools":["web__fetch","memory__search"]}}`)
	_, x, err := r.Say("telegram:2", "fetch", meta)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, n := range x.Notes() {
		if n.Update.SessionUpdate == acp.UpdateToolCall || n.Update.SessionUpdate == acp.UpdateToolCallUpdate {
			if n.Update.Meta == nil || n.Update.Meta.Link.Activity == nil || *n.Update.Meta.Link.Activity {
				t.Fatalf("a call streamed without activity false: %+v", n.Update)
			}
			marked++
		}
	}
	if marked != 6 {
		t.Fatalf("%d tool updates streamed, want 6", marked)
	}
	ev := r.Events("telegram:2")
	results := map[string]store.Event{}
	for _, e := range ev {
		if e.Kind == store.KindToolResult {
			results[e.Tool] = e
		}
	}
	if len(results) != 3 {
		t.Fatalf("results %+v", results)
	}
	if f := results["web__fetch"]; len(f.Text) > harness.MaxToolAnswer || !strings.Contains(f.Text, "cut here") || f.IsError {
		t.Fatalf("a 40 KiB answer kept as %d bytes", len(f.Text))
	}
	if w := results["memory__write"]; !w.IsError || !strings.Contains(w.Text, "no tool memory__write") {
		t.Fatalf("a call to a tool not offered answered %+v", w)
	}
	if r.Tools.Total() != 2 {
		t.Fatalf("%d calls made, want 2", r.Tools.Total())
	}
	req := r.Requests("telegram:2")[1]
	if len(req.Tools) != 2 {
		t.Fatalf("offered %+v", req.Tools)
	}
}
