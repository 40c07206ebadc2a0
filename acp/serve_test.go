package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coder/websocket"
	"github.com/lnk-dev/link/contract"
)

// TestClientPrompt drives Serve with Client over a real WebSocket: the
// agent sees the prompt's thread, blocks, _meta.link, tools and agent;
// the client sees taken, then the stream in order, then the answer.
func TestClientPrompt(t *testing.T) {
	a := newScripted()
	tools := []string{"memory__search", "web__fetch"}
	url, served := wsServer(t, a, &tools, 0)
	ctx := testCtx(t)
	var mu sync.Mutex
	var methods []string
	var updates []Update
	c := NewClient(ctx, dialWS(t, url), func(method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		methods = append(methods, method)
		if method == MethodSessionUpdate {
			var n Notification
			var u Update
			if json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || n.SessionID != "link:notes" {
				t.Errorf("bad session/update: %s", params)
			}
			updates = append(updates, u)
		}
	})
	init, err := c.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.Resume == nil ||
		!init.AgentCapabilities.PromptCapabilities.Image || !init.AgentCapabilities.PromptCapabilities.Audio || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext {
		t.Errorf("initialize answered %+v", init)
	}
	if err := c.Resume(ctx, "link:notes"); err != nil {
		t.Fatal(err)
	}
	meta := json.RawMessage(`{"link":{"from":"webhook:github","tools":["memory__search"],"model":"fast"},"other":{"x":1}}`)
	blocks := []Block{
		{Type: "text", Text: "hello"},
		{Type: "audio", MimeType: "audio/ogg", Data: "T2dnUw=="},
		{Type: "resource", Resource: &Resource{URI: "file:///a.pdf", MimeType: "application/pdf", Blob: "JVBERi0="}},
	}
	res, err := c.Prompt(ctx, "link:notes", blocks, meta)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopEndTurn || res.Steered() {
		t.Errorf("answer %+v", res)
	}
	mu.Lock()
	if len(methods) == 0 || methods[0] != contract.MethodTaken {
		t.Errorf("first notification %v, want _link/taken first", methods)
	}
	var kinds []string
	for _, u := range updates {
		kinds = append(kinds, u.SessionUpdate)
	}
	want := "agent_message_chunk tool_call tool_call_update tool_call tool_call_update agent_message_chunk"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("updates %s, want %s", got, want)
	}
	if u := updates[1]; u.Title != "memory__search" || u.Status != ToolInProgress || u.Meta == nil || *u.Meta.Link.Activity != true {
		t.Errorf("tool call %+v", u)
	}
	mu.Unlock()

	p := a.lastPrompt(t)
	type prompt struct {
		Agent, Thread, From, Model string
		LinkTools, Tools           *[]string
	}
	wantPrompt := prompt{"main", "link:notes", "webhook:github", "fast", &[]string{"memory__search"}, &[]string{"memory__search", "web__fetch"}}
	if diff := cmp.Diff(wantPrompt, prompt{p.Agent, p.Thread, p.Link.From, p.Link.Model, p.Link.Tools, p.Tools}); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
	if len(p.Blocks) != 3 || p.Blocks[1].Data != "T2dnUw==" || p.Blocks[2].Resource.Blob != "JVBERi0=" {
		t.Errorf("blocks %+v", p.Blocks)
	}
	if string(p.Meta) != string(meta) {
		t.Errorf("meta %s, want it as it came", p.Meta)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("serve after a clean close: %v", err)
	}
}

// TestCancel: session/cancel cancels the running prompt's context, and an
// agent that returns the context's error is answered stopReason cancelled.
func TestCancel(t *testing.T) {
	a := newScripted()
	url, _ := wsServer(t, a, nil, 0)
	ctx := testCtx(t)
	c := NewClient(ctx, dialWS(t, url), nil)
	defer c.Close()
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
	if err := c.Cancel(ctx, "discord:2"); err != nil { // another session's: nothing
		t.Fatal(err)
	}
	select {
	case <-got:
		t.Fatal("a cancel of another session ended the prompt")
	case <-time.After(20 * time.Millisecond):
	}
	if err := c.Cancel(ctx, "discord:1"); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.StopReason != StopCancelled {
		t.Errorf("stop reason %q, want cancelled", res.StopReason)
	}
}

// TestCallerGone: a client that goes mid-turn leaves the turn running;
// the agent's later stream calls fail, and Serve returns once the turn
// has.
func TestCallerGone(t *testing.T) {
	a := newScripted()
	url, served := wsServer(t, a, nil, 0)
	ctx := testCtx(t)
	f := dialWS(t, url)
	c := NewClient(ctx, f, nil)
	c.Initialize(ctx)
	c.Resume(ctx, "signal:15551234567")
	go c.Prompt(ctx, "signal:15551234567", []Block{{Type: "text", Text: "wait"}}, nil)
	<-a.started
	f.CloseNow()
	c.Close()
	select {
	case err := <-served:
		t.Fatalf("serve returned (%v) with the turn still running", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(a.release)
	<-a.done
	if err := <-served; err == nil {
		t.Error("serve after the client vanished: nil, want the connection's error")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.streamErrs) != 1 || !errors.Is(a.streamErrs[0], ErrClosed) {
		t.Errorf("stream call after the caller went: %v, want ErrClosed", a.streamErrs)
	}
}

// TestBinaryFramesIgnored: a binary frame is read past; the text frame
// after it is answered.
func TestBinaryFramesIgnored(t *testing.T) {
	url, _ := wsServer(t, newScripted(), nil, 0)
	ctx := testCtx(t)
	f := dialWS(t, url)
	if err := f.Conn().Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":1,"method":"nope"}`)); err != nil {
		t.Fatal(err)
	}
	f.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`))
	b, err := f.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMessage(b)
	if err != nil || string(m.ID) != "2" || m.Error != nil {
		t.Errorf("got %s, want initialize's answer", b)
	}
}

// TestReadLimit: a message past the read limit ends the connection with
// ErrTooLong on the reading side.
func TestReadLimit(t *testing.T) {
	url, served := wsServer(t, newScripted(), nil, 1024)
	ctx := testCtx(t)
	f := dialWS(t, url)
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	f.WriteMessage(ctx, []byte(big))
	if err := <-served; !errors.Is(err, ErrTooLong) {
		t.Errorf("serve: %v, want ErrTooLong", err)
	}
	if _, err := f.ReadMessage(ctx); err == nil {
		t.Error("the connection still answers after a message past the limit")
	}
}

// TestErrorOf: the one mapping of errors to JSON-RPC codes.
func TestErrorOf(t *testing.T) {
	rule := &contract.RuleError{Field: "from", Rule: "from is one of ..."}
	for _, c := range []struct {
		err  error
		code int
		msg  string
	}{
		{rule, CodeInvalidParams, "from: from is one of ..."},
		{errors.Join(errors.New("prompt"), rule), CodeInvalidParams, "from: from is one of ..."},
		{Errorf(CodeMethodNotFound, "x"), CodeMethodNotFound, "x"},
		{context.Canceled, CodeInternalError, "the request ended before its answer: context canceled"},
		{errors.New("disk full"), CodeInternalError, "disk full"},
	} {
		e := ErrorOf(c.err)
		if e.Code != c.code || e.Message != c.msg {
			t.Errorf("ErrorOf(%v) = %d %q, want %d %q", c.err, e.Code, e.Message, c.code, c.msg)
		}
	}
}
