package acp

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// toldAgent answers each prompt with an Answer whose Told notes the
// call; "wait" holds its answer until release is closed.
type toldAgent struct {
	started chan struct{}
	release chan struct{}
	told    chan string
}

func (a *toldAgent) Prompt(ctx context.Context, p Prompt, s Stream) (Answer, error) {
	s.Taken(ctx)
	text := TextOf(p.Blocks)
	if text == "wait" {
		a.started <- struct{}{}
		<-a.release
	}
	return Answer{StopReason: StopEndTurn, Told: func() { a.told <- text }}, nil
}

func (a *toldAgent) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	return contract.RecoverResult{}, nil
}

func newToldAgent() *toldAgent {
	return &toldAgent{started: make(chan struct{}, 1), release: make(chan struct{}), told: make(chan string, 4)}
}

// TestAnswerToldAfterResponse: Told is called once the response was
// written, and the client has it.
func TestAnswerToldAfterResponse(t *testing.T) {
	a := newToldAgent()
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
	case got := <-a.told:
		if got != "hello" {
			t.Errorf("told %q, want hello", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Told never called after the response was written")
	}
}

// TestAnswerNotToldClientGone: a client gone before the response leaves
// Told uncalled.
func TestAnswerNotToldClientGone(t *testing.T) {
	a := newToldAgent()
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
	time.Sleep(20 * time.Millisecond)
	close(a.release)
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("serve never returned")
	}
	select {
	case got := <-a.told:
		t.Errorf("Told called (%q) with the client gone", got)
	default:
	}
}
