package harness_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store/delivery"
)

// textStream is a caller that takes whatever streams to it.
type textStream struct {
	mu   sync.Mutex
	text strings.Builder
}

func (s *textStream) Taken(context.Context) error { return nil }
func (s *textStream) Chunk(_ context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.WriteString(text)
	return nil
}
func (s *textStream) ToolCall(context.Context, string, string, *bool) error { return nil }
func (s *textStream) ToolCallUpdate(context.Context, string, string, *bool) error {
	return nil
}

// A turn's answer to a live caller is held from before its event is
// stored until the caller has it: Prompt returns with it held and a
// Delivered that lets it go.
func TestAnswerHeldUntilDelivered(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "delivered at last"})
	ctx := t.Context()
	s := &textStream{}
	ans, err := r.Harness.Prompt(ctx, acp.Prompt{Agent: testAgent, Thread: "telegram:7", Blocks: []acp.Block{{Type: "text", Text: "hi"}}}, s)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Delivered == nil {
		t.Fatal("an answer to a live caller has no Delivered")
	}
	kept, err := r.Answers().Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, k := range kept {
		got = append(got, [2]string{k.Thread, k.Text})
	}
	if diff := cmp.Diff([][2]string{{"telegram:7", "delivered at last"}}, got); diff != "" {
		t.Fatalf("held before delivered (-want +got):\n%s", diff)
	}
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v while it is sent to its caller", got)
	}
	ans.Delivered()
	if kept, err := r.Answers().Pending(ctx); err != nil || len(kept) != 0 {
		t.Fatalf("held after delivered: %+v, %v", kept, err)
	}
}

// Over a real connection, the answer delivered leaves nothing kept, and
// a recover hands nothing over.
func TestAnswerDeliveredKeepsNothing(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "the answer"})
	res, x, err := r.Say("telegram:8", "hi", nil)
	if err != nil || res.StopReason != acp.StopEndTurn || x.Text() != "the answer" {
		t.Fatalf("say: %+v %q %v", res, x.Text(), err)
	}
	testwait.For(t, 10*time.Second, "the answer delivered let go", func() bool {
		kept, err := r.Answers().Pending(t.Context())
		return err == nil && len(kept) == 0
	})
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Errorf("recovered %+v after the answer was delivered", got)
	}
}

// An answer whose response was never written (Delivered never called)
// is handed over once the grace after its turn has passed.
func TestAnswerUndeliveredHandedOver(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	r := newRig(t, func(c *harness.Config) {
		c.Now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
	})
	r.Model.Push(model.Response{Text: "never delivered"})
	ans, err := r.Harness.Prompt(t.Context(), acp.Prompt{Agent: testAgent, Thread: "telegram:9", Blocks: []acp.Block{{Type: "text", Text: "hi"}}}, &textStream{})
	if err != nil || ans.Delivered == nil {
		t.Fatalf("prompt: %+v, %v", ans, err)
	}
	if got := r.recover(t, map[string]any{}).Answers; len(got) != 0 {
		t.Fatalf("recovered %+v within the grace", got)
	}
	mu.Lock()
	now = now.Add(delivery.Grace + time.Second)
	mu.Unlock()
	got := r.recover(t, map[string]any{}).Answers
	if len(got) != 1 || got[0].Text != "never delivered" || got[0].Thread != "telegram:9" {
		t.Fatalf("recovered %+v after the grace, want the answer never delivered", got)
	}
}
