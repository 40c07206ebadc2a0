package scripted

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lnk-dev/link/model"
)

func ask(text string) model.Request {
	return model.Request{Model: "anthropic/claude-opus-5-5", Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{model.Text(text)}}}}
}

// collect gathers a call's deltas.
type collect struct {
	text, thinking strings.Builder
	n, more        int // deltas, and those saying More
}

func (c *collect) on(d model.Delta) error {
	c.text.WriteString(d.Text)
	c.thinking.WriteString(d.Thinking)
	c.n++
	if d.More {
		c.more++
	}
	return nil
}

func TestOffline(t *testing.T) {
	var c collect
	resp, err := Offline{}.Stream(t.Context(), ask("hello there"), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Text, Label+"You said: “hello there”.") || c.text.String() != resp.Text || c.n != 3 {
		t.Fatalf("answer %q, streamed %q in %d deltas", resp.Text, c.text.String(), c.n)
	}
	// It holds the whole answer: each piece says what follows is in hand.
	if c.more != c.n {
		t.Errorf("%d of %d deltas say More, want all", c.more, c.n)
	}
	for _, key := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_HOST"} {
		if !strings.Contains(resp.Text, key) {
			t.Errorf("answer doesn't say how to set %s: %q", key, resp.Text)
		}
	}
	if resp.StopReason != model.StopEnd || resp.Provider != OfflineName || resp.Model != "anthropic/claude-opus-5-5" || resp.Usage.In == 0 || resp.Usage.Out == 0 || len(resp.Calls) != 0 {
		t.Fatalf("answer %+v", resp)
	}
	// Deterministic: the same request is answered the same, and the clock
	// given measures it.
	tick := time.Unix(0, 0)
	clock := func() time.Time { tick = tick.Add(time.Second); return tick }
	again, err := Offline{Now: clock}.Stream(t.Context(), ask("hello there"), func(model.Delta) error { return nil })
	if err != nil || again.Text != resp.Text || again.ID != resp.ID || again.Latency != time.Second {
		t.Fatalf("again %+v, %v", again, err)
	}

	why := "model \"x\": set OPENROUTER_API_KEY"
	if got := (Offline{Why: why}).Text(ask("")); got != Label+"I was sent no text to repeat. "+why {
		t.Errorf("Text = %q", got)
	}
	long := strings.Repeat("é", maxEcho+10)
	if got := (Offline{}).Text(ask(long)); !strings.Contains(got, strings.Repeat("é", maxEcho)+"…”") || strings.Contains(got, strings.Repeat("é", maxEcho+1)) {
		t.Errorf("a long message isn't cut at %d runes", maxEcho)
	}
	stop := errors.New("stop")
	if _, err := (Offline{}).Stream(t.Context(), ask("x"), func(model.Delta) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("onDelta's error = %v", err)
	}
}

// The offline model repeats the last text part of the last user message
// that has one: the text sent, not its header (a part of its own before
// it), nor a tool's answer, nor an earlier message.
func TestOfflineLastPart(t *testing.T) {
	req := model.Request{Messages: []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{model.Text("[Mon 30 Nov 2026 06:40 UTC, link]"), model.Text("first")}},
		{Role: model.RoleAssistant, Parts: []model.Part{model.Text("ok"), model.ToolUse("c1", "memory__search", "{}")}},
		{Role: model.RoleUser, Parts: []model.Part{model.ToolResult("c1", "found", false), model.Text("[Mon 30 Nov 2026 06:41 UTC, link]"), model.Text("hello there")}},
		{Role: model.RoleAssistant, Parts: []model.Part{model.Text("answered")}},
		{Role: model.RoleUser, Parts: []model.Part{model.ToolResult("c2", "only a tool's answer", false)}},
	}}
	got := Offline{}.Text(req)
	if !strings.HasPrefix(got, Label+"You said: “hello there”. ") {
		t.Fatalf("Text = %q", got)
	}
}

func TestScripted(t *testing.T) {
	s := New(
		model.Response{Text: "calling", Calls: []model.ToolCall{{Name: "memory__search"}}, Usage: model.Usage{In: 5, Out: 2}},
		model.Response{Text: "done", Thinking: []model.Thinking{{Text: "hm", Signature: "sig"}}, CostUSD: 0.25, Provider: "anthropic"},
	)
	// Latency is the time the call took, and a response without usage
	// gets an estimate: neither is the script's to say.
	noTime := cmpopts.IgnoreFields(model.Response{}, "Latency")
	var c collect
	r1, err := s.Stream(t.Context(), ask("a"), c.on)
	if err != nil {
		t.Fatal(err)
	}
	want1 := model.Response{
		Text:       "calling",
		Calls:      []model.ToolCall{{ID: "call_1_0", Name: "memory__search", Input: "{}"}},
		StopReason: model.StopToolUse,
		Model:      "anthropic/claude-opus-5-5",
		Provider:   ScriptedName,
		ID:         "scripted-1",
		Usage:      model.Usage{In: 5, Out: 2},
	}
	if diff := cmp.Diff(want1, r1, noTime); diff != "" || c.text.String() != "calling" || c.n != 3 {
		t.Fatalf("first (-want +got):\n%s; streamed %q in %d deltas", diff, c.text.String(), c.n)
	}
	c = collect{}
	r2, err := s.Stream(t.Context(), ask("b"), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Usage.Out == 0 {
		t.Errorf("second: no usage estimated: %+v", r2.Usage)
	}
	want2 := model.Response{
		Text:       "done",
		Thinking:   []model.Thinking{{Text: "hm", Signature: "sig"}},
		StopReason: model.StopEnd,
		Model:      "anthropic/claude-opus-5-5",
		Provider:   "anthropic",
		ID:         "scripted-2",
		CostUSD:    0.25,
	}
	if diff := cmp.Diff(want2, r2, noTime, cmpopts.IgnoreFields(model.Response{}, "Usage")); diff != "" || c.thinking.String() != "hm" {
		t.Fatalf("second (-want +got):\n%s; thinking streamed %q", diff, c.thinking.String())
	}
	if _, err := s.Stream(t.Context(), ask("c"), c.on); !errors.Is(err, ErrEmpty) {
		t.Fatalf("past the queue = %v", err)
	}
	if rs := s.Requests(); len(rs) != 3 || rs[2].LastUserText() != "c" || s.Left() != 0 {
		t.Fatalf("%d requests recorded, %d left", len(rs), s.Left())
	}

	s.Push(model.Response{Calls: []model.ToolCall{{Name: "x"}}})
	req := ask("d")
	req.ToolChoice = model.ToolNone
	if _, err := s.Stream(t.Context(), req, c.on); !errors.Is(err, ErrToolChoice) {
		t.Fatalf("calls against ToolNone = %v", err)
	}

	refused := model.ClassifyError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`)
	s.Fail(refused)
	if _, err := s.Stream(t.Context(), ask("e"), c.on); !errors.Is(err, model.ErrPromptTooLong) {
		t.Fatalf("Fail = %v", err)
	}
}

func TestScriptedHeldAndCancelled(t *testing.T) {
	release := make(chan struct{})
	s := New(model.Response{Text: "held answer"}, model.Response{Text: "slow"})
	s.Before = func(ctx context.Context, _ model.Request) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	done := make(chan model.Response)
	go func() {
		r, _ := s.Stream(t.Context(), ask("a"), func(model.Delta) error { return nil })
		done <- r
	}()
	select {
	case <-done:
		t.Fatal("answered before released")
	case <-time.After(20 * time.Millisecond):
	}
	if len(s.Requests()) != 1 {
		t.Fatal("a held call's request isn't recorded")
	}
	close(release)
	if r := <-done; r.Text != "held answer" {
		t.Fatalf("released answer %+v", r)
	}

	s.Before = nil
	s.Delay = time.Hour
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Stream(ctx, ask("b"), func(model.Delta) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a delayed answer past its context = %v", err)
	}
}

func TestRequestText(t *testing.T) {
	req := model.Request{
		System: []model.Section{{Text: "base", Cache: true}},
		Messages: []model.Message{
			{Role: model.RoleUser, Parts: []model.Part{model.Text("hi"), model.Image("image/png", "AAAA")}},
			{Role: model.RoleAssistant, Parts: []model.Part{model.ThinkingPart(model.Thinking{Text: "secret"}), model.ToolUse("1", "t", `{}`)}},
			{Role: model.RoleUser, Parts: []model.Part{model.ToolResult("1", "result", false)}},
		},
	}
	if got := RequestText(req); got != "base\nhi\nresult\n" {
		t.Errorf("RequestText = %q", got)
	}
}

// A delayed piece's next waits on the delay: no piece says More then, so
// a caller sends each as it comes.
func TestScriptedDelayedSaysNoMore(t *testing.T) {
	s := New(model.Response{Text: "a slow answer", Thinking: []model.Thinking{{Text: "hm"}}})
	s.Delay = time.Millisecond
	var c collect
	if _, err := s.Stream(t.Context(), ask("a"), c.on); err != nil {
		t.Fatal(err)
	}
	if c.n != 4 || c.more != 0 || c.text.String() != "a slow answer" {
		t.Fatalf("streamed %q in %d deltas, %d saying More; want 4, none", c.text.String(), c.n, c.more)
	}
}
