package acp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
)

// canceller is the tests' Agent that is also a Canceller: it notes each
// Cancel, and whether a "block" prompt's context ended by session/cancel.
type canceller struct {
	*scripted
	mu        sync.Mutex
	cancels   []string // "agent thread"
	cancelled chan bool
}

func (a *canceller) Prompt(ctx context.Context, p Prompt, s Stream) (Outcome, error) {
	if TextOf(p.Blocks) != "block" {
		return a.scripted.Prompt(ctx, p, s)
	}
	s.Taken(ctx)
	a.started <- struct{}{}
	<-ctx.Done()
	a.cancelled <- IsCancelled(ctx)
	// The caller still waits: what streams now reaches it.
	s.Chunk(context.WithoutCancel(ctx), "stopped")
	return Outcome{StopReason: StopCancelled}, nil
}

func (a *canceller) Cancel(ctx context.Context, agent, thread string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cancels = append(a.cancels, agent+" "+thread)
	return nil
}

func (a *canceller) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.cancels)
}

// TestCanceller: session/cancel of a session resumed on the connection
// asks a Canceller agent to end that thread's turn, besides cancelling
// the prompt's context with ErrCancelled as its cause; one of a session
// not resumed on the connection asks nothing. What the agent streams
// after the cancel still reaches the client, before the answer.
func TestCanceller(t *testing.T) {
	a := &canceller{scripted: newScripted(), cancelled: make(chan bool, 1)}
	url, served := wsServer(t, a, nil, 0)
	ctx := testCtx(t)
	var mu sync.Mutex
	var chunks []string
	c := NewClient(ctx, dialWS(t, url), func(method string, params json.RawMessage) {
		var n struct {
			Update Update `json:"update"`
		}
		if method == MethodSessionUpdate && json.Unmarshal(params, &n) == nil && n.Update.Content != nil {
			mu.Lock()
			chunks = append(chunks, n.Update.Content.Text)
			mu.Unlock()
		}
	})
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "discord:1"); err != nil {
		t.Fatal(err)
	}
	got := make(chan PromptResult, 1)
	go func() {
		res, err := c.Prompt(ctx, "discord:1", []Block{{Type: "text", Text: "block"}}, nil)
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	<-a.started
	if err := c.Cancel(ctx, "discord:2"); err != nil { // not resumed here
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, "discord:1"); err != nil {
		t.Fatal(err)
	}
	if !<-a.cancelled {
		t.Error("the prompt's context ended, but not by session/cancel (IsCancelled false)")
	}
	if res := <-got; res.StopReason != StopCancelled {
		t.Errorf("stop reason %q, want cancelled", res.StopReason)
	}
	mu.Lock()
	if strings.Join(chunks, "") != "stopped" {
		t.Errorf("streamed %q after the cancel, want it to reach the client", chunks)
	}
	mu.Unlock()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	// Serve has returned, so every Cancel it began has too.
	if got, want := a.asked(), []string{"main discord:1"}; !slices.Equal(got, want) {
		t.Errorf("Cancel asked %q, want %q", got, want)
	}
}

// TestIsCancelled: only a context ended with ErrCancelled as its cause
// is one session/cancel ended.
func TestIsCancelled(t *testing.T) {
	live, stop := context.WithCancelCause(context.Background())
	if IsCancelled(live) {
		t.Error("a live context is cancelled")
	}
	stop(ErrCancelled)
	if !IsCancelled(live) {
		t.Error("a context ended with ErrCancelled isn't")
	}
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	if IsCancelled(plain) {
		t.Error("a context merely cancelled (its caller gone) is taken for session/cancel")
	}
}
