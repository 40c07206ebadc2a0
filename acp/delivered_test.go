package acp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
)

// deliveredAgent answers each prompt with an Outcome whose Delivered notes the
// call; "wait" holds its answer until release is closed.
type deliveredAgent struct {
	stream    Stream // the "wait" prompt's, set before started is sent
	started   chan struct{}
	release   chan struct{}
	delivered chan string
}

func (a *deliveredAgent) Prompt(ctx context.Context, p Prompt, s Stream) (Outcome, error) {
	s.Taken(ctx)
	text := TextOf(p.Blocks)
	if text == "wait" {
		a.stream = s
		a.started <- struct{}{}
		<-a.release
	}
	return Outcome{StopReason: StopEndTurn, Delivered: func() { a.delivered <- text }}, nil
}

func (a *deliveredAgent) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	return contract.RecoverResult{}, nil
}

func newDeliveredAgent() *deliveredAgent {
	return &deliveredAgent{started: make(chan struct{}, 1), release: make(chan struct{}), delivered: make(chan string, 4)}
}

// TestAnswerDeliveredAfterResponse: Delivered is called once the response was
// written, and the client has it.
func TestAnswerDeliveredAfterResponse(t *testing.T) {
	a := newDeliveredAgent()
	url, _ := wsServer(t, a, nil, 0)
	ctx := testCtx(t)
	c := NewClient(ctx, dialWS(t, url), nil)
	c.Initialize(ctx)
	if err := c.Resume(ctx, "telegram:42"); err != nil {
		t.Fatal(err)
	}
	res, err := c.Prompt(ctx, "telegram:42", []Block{{Type: "text", Text: "hello"}}, nil)
	if err != nil || res.StopReason != StopEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	select {
	case got := <-a.delivered:
		if got != "hello" {
			t.Errorf("delivered %q, want hello", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Delivered never called after the response was written")
	}
}

// TestAnswerNotDeliveredClientGone: a client gone before the response leaves
// Delivered uncalled.
func TestAnswerNotDeliveredClientGone(t *testing.T) {
	a := newDeliveredAgent()
	url, served := wsServer(t, a, nil, 0)
	ctx := testCtx(t)
	f := dialWS(t, url)
	c := NewClient(ctx, f, nil)
	c.Initialize(ctx)
	if err := c.Resume(ctx, "telegram:42"); err != nil {
		t.Fatal(err)
	}
	go c.Prompt(ctx, "telegram:42", []Block{{Type: "text", Text: "wait"}}, nil)
	<-a.started
	f.CloseNow()
	c.Close()
	// The connection ends while the turn runs; its response then fails.
	testwait.For(t, 5*time.Second, "the turn's stream to fail with the connection gone", func() bool {
		return errors.Is(a.stream.Chunk(ctx, "."), ErrClosed)
	})
	close(a.release)
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("serve never returned")
	}
	select {
	case got := <-a.delivered:
		t.Errorf("Delivered called (%q) with the client gone", got)
	default:
	}
}
