package acp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/lnk-dev/link/contract"
)

// scripted is the tests' Agent: what it does with a prompt is chosen by
// the prompt's text.
type scripted struct {
	mu         sync.Mutex
	prompts    []Prompt
	streamErrs []error       // errors Stream calls returned after the caller went
	release    chan struct{} // "wait" prompts wait for it
	started    chan struct{} // "wait" and "block" prompts say they started
	done       chan struct{} // closed as a "wait" prompt returns
}

func newScripted() *scripted {
	return &scripted{release: make(chan struct{}), started: make(chan struct{}, 4), done: make(chan struct{}, 4)}
}

func (a *scripted) Prompt(ctx context.Context, p Prompt, s Stream) (Outcome, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, p)
	a.mu.Unlock()
	yes, no := true, false
	switch TextOf(p.Blocks) {
	case "hello":
		if err := s.Taken(ctx); err != nil {
			return Outcome{}, err
		}
		s.Chunk(ctx, "Hel")
		s.ToolCall(ctx, "call_1", "memory__search", &yes)
		s.ToolCallUpdate(ctx, "call_1", ToolCompleted, &no)
		s.ToolCall(ctx, "call_2", "web__fetch", nil)
		s.ToolCallUpdate(ctx, "call_2", ToolFailed, nil)
		s.Chunk(ctx, "lo")
		return Outcome{StopReason: StopEndTurn}, nil
	case "lazy":
		// Chunks without saying taken: Serve says it first.
		s.Chunk(ctx, "ok")
		return Outcome{}, nil
	case "steer":
		s.Taken(ctx)
		return Outcome{StopReason: StopEndTurn, Steered: true}, nil
	case "fail":
		return Outcome{}, errors.New("model: the provider is down")
	case "rule":
		return Outcome{}, &contract.RuleError{Field: "model", Rule: "no such model alias"}
	case "block":
		// Runs until cancelled, and says so as ACP asks: by error here,
		// which Serve turns into stopReason cancelled.
		s.Taken(ctx)
		a.started <- struct{}{}
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	case "wait":
		// Keeps the turn going after its caller left.
		s.Taken(ctx)
		a.started <- struct{}{}
		<-a.release
		err := s.Chunk(ctx, "late")
		a.mu.Lock()
		a.streamErrs = append(a.streamErrs, err)
		a.mu.Unlock()
		a.done <- struct{}{}
		return Outcome{StopReason: StopEndTurn}, nil
	}
	s.Taken(ctx)
	s.Chunk(ctx, "echo: "+TextOf(p.Blocks))
	return Outcome{StopReason: StopEndTurn}, nil
}

func (a *scripted) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	if len(p.Done) > 0 {
		return contract.RecoverResult{}, nil
	}
	if !p.TwoPhase {
		return contract.RecoverResult{Answers: []contract.RecoveredAnswer{{Thread: "telegram:42", Text: "answer for " + agent}}}, nil
	}
	return contract.RecoverResult{Answers: []contract.RecoveredAnswer{{ID: "a1", Thread: "telegram:42", Text: "kept"}}}, nil
}

func (a *scripted) lastPrompt(t *testing.T) Prompt {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.prompts) == 0 {
		t.Fatal("the agent got no prompt")
	}
	return a.prompts[len(a.prompts)-1]
}

// wsServer serves Serve on a real WebSocket at 127.0.0.1:0. Serve's
// results arrive on the returned channel, one per connection.
func wsServer(t *testing.T, a Agent, tools *[]string, limit int64) (url string, served chan error) {
	t.Helper()
	served = make(chan error, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		f := NewWebSocket(c, limit)
		served <- Serve(context.Background(), f, "main", tools, a)
		f.CloseNow()
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), served
}

// dialWS opens a client WebSocket to url.
func dialWS(t *testing.T, url string) *WebSocket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	f := NewWebSocket(c, 0)
	t.Cleanup(func() { f.CloseNow() })
	return f
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
