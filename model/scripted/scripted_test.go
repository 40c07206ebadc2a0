package scripted

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
)

func ask(text string) model.Request {
	return model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{model.Text(text)}}}}
}

func TestOffline(t *testing.T) {
	var got strings.Builder
	resp, err := Offline{}.Stream(t.Context(), ask("hello there"), func(d model.Delta) error { got.WriteString(d.Text); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "heard: hello there" || got.String() != resp.Text || resp.StopReason != model.StopEnd || resp.Provider != Name {
		t.Fatalf("answer %+v, streamed %q", resp, got.String())
	}
	if resp.Usage.In == 0 || resp.Usage.Out == 0 {
		t.Fatalf("no usage: %+v", resp.Usage)
	}
}

func TestQueue(t *testing.T) {
	q := &Queue{}
	q.Push(Turn{Text: "calling", Calls: []model.ToolCall{{Name: "memory__search"}}}, Turn{Text: "done", Thinking: "hm"})
	r1, err := q.Stream(t.Context(), ask("a"), func(model.Delta) error { return nil })
	if err != nil || len(r1.Calls) != 1 || r1.Calls[0].ID == "" || r1.Calls[0].Input != "{}" || r1.StopReason != model.StopToolUse {
		t.Fatalf("first = %+v, %v", r1, err)
	}
	var thinking string
	r2, err := q.Stream(t.Context(), ask("b"), func(d model.Delta) error { thinking += d.Thinking; return nil })
	if err != nil || r2.Text != "done" || thinking != "hm" || len(r2.Thinking) != 1 {
		t.Fatalf("second = %+v, %v", r2, err)
	}
	r3, err := q.Stream(t.Context(), ask("c"), func(model.Delta) error { return nil })
	if err != nil || r3.Text != "heard: c" {
		t.Fatalf("after the script = %+v, %v", r3, err)
	}
	if n := len(q.Requests()); n != 3 || q.Left() != 0 {
		t.Fatalf("%d requests recorded, %d left", n, q.Left())
	}
	q.Push(Turn{Calls: []model.ToolCall{{Name: "x"}}})
	req := ask("d")
	req.ToolChoice = model.ToolNone
	if _, err := q.Stream(t.Context(), req, func(model.Delta) error { return nil }); !errors.Is(err, ErrNoChoice) {
		t.Fatalf("calls against ToolNone = %v", err)
	}
	wait := make(chan struct{})
	q.Push(Turn{Text: "x", Wait: wait})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := q.Stream(ctx, ask("e"), func(model.Delta) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("held turn with its context gone = %v", err)
	}
	stop := errors.New("stop")
	if _, err := q.Stream(t.Context(), ask("f"), func(model.Delta) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("onDelta's error = %v", err)
	}
}
