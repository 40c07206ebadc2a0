package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/endpoint/endpointtest"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// piecesModel is a model.Provider that streams its pieces as given, More
// and all; after each piece it calls after (nil: nothing), where a test
// waits for what the caller has seen.
type piecesModel struct {
	pieces []model.Delta
	after  func(ctx context.Context, i int) error
}

func (p piecesModel) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	var text strings.Builder
	for i, d := range p.pieces {
		if err := onDelta(d); err != nil {
			return model.Response{}, err
		}
		text.WriteString(d.Text)
		if p.after != nil {
			if err := p.after(ctx, i); err != nil {
				return model.Response{}, err
			}
		}
	}
	return model.Response{Text: text.String(), StopReason: model.StopEnd}, nil
}

// countedRig is a rig whose model is p, served also by an endpoint of
// its own whose connections' writes are counted: ln.
func countedRig(t *testing.T, p model.Provider) (*rig, *endpointtest.WritesListener, string) {
	t.Helper()
	r := newRig(t, func(c *harness.Config) {
		c.Provider = func(model.Route) (model.Provider, error) { return p, nil }
	})
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: testAgent, Key: r.Key}},
		Own:     testAgent,
		Handler: endpoint.AgentHandler{Agent: r.Harness},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := endpointtest.Listen(t)
	go srv.Serve(context.Background(), ln)
	t.Cleanup(func() { srv.Close() })
	return r, ln, url
}

// say sends text in thread over a connection of its own to url, and
// returns the answer's chunks' texts, in order, once the connection has
// closed.
func say(t *testing.T, url, thread, text string, onChunk func(string)) []string {
	t.Helper()
	chunks, err := sayErr(t.Context(), url, thread, text, onChunk)
	if err != nil {
		t.Fatal(err)
	}
	return chunks
}

// sayErr is say for a goroutine of the test's own: it returns what failed.
func sayErr(ctx context.Context, url, thread, text string, onChunk func(string)) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: harnesstest.Key, Agent: testAgent})
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var chunks []string
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		var p struct {
			Update acp.Update `json:"update"`
		}
		if method != acp.MethodSessionUpdate || json.Unmarshal(params, &p) != nil || p.Update.SessionUpdate != acp.UpdateMessageChunk {
			return
		}
		mu.Lock()
		chunks = append(chunks, p.Update.Content.Text)
		mu.Unlock()
		if onChunk != nil {
			onChunk(p.Update.Content.Text)
		}
	})
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Resume(ctx, thread); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return chunks, nil
}

// A turn whose model streams its answer in pieces it already holds
// (model.Delta.More, as the offline model's) writes the answer as one
// agent_message_chunk, the text whole and in order: the turn's writes
// on a real WebSocket are those of the floor lnk measure sets it beside.
func TestTurnWritesHeldPiecesAsOneChunk(t *testing.T) {
	pieces := []model.Delta{{Text: "[offline] You said: “é中", More: true}, {Text: "文🙂 \"<b>\"”. ", More: true}, {Text: "No key.", More: true}}
	r, ln, url := countedRig(t, piecesModel{pieces: pieces})
	const thread = "link:held-pieces"
	chunks := say(t, url, thread, "hello", nil)
	want := "[offline] You said: “é中文🙂 \"<b>\"”. No key."
	if len(chunks) != 1 || chunks[0] != want {
		t.Fatalf("chunks %q, want the one %q", chunks, want)
	}
	r.Server.Close() // the rig's; the counted endpoint's conns are done once its client closed
	frames := onlyConnFrames(t, ln)
	got := strings.Join(frames, " | ")
	wantWrites := "result | result+available_commands_update | _link/taken | agent_message_chunk | result | close"
	if got != wantWrites {
		t.Errorf("the turn's writes after the upgrade:\n%s\nwant\n%s", got, wantWrites)
	}
	answers := count(r.Events(thread), isKind(store.KindAnswer))
	if evs := r.Events(thread); answers != 1 || evs[len(evs)-1].Text != want {
		t.Errorf("stored %d answers, the last %q; want one, %q", answers, evs[len(evs)-1].Text, want)
	}
}

// A piece the model doesn't say More of goes to the caller before the
// model's next piece is asked for: the model below waits, after each
// such piece, until the client has it, so a piece held back would stall
// the turn and fail it. Pieces in hand before it go with it, in order.
func TestSlowPiecesStreamAtOnce(t *testing.T) {
	seen := make(chan string, 4)
	pieces := []model.Delta{{Text: "one ", More: true}, {Text: "two "}, {Text: "three ", More: true}, {Text: "four"}}
	p := piecesModel{pieces: pieces, after: func(ctx context.Context, i int) error {
		if pieces[i].More {
			return nil
		}
		select {
		case <-seen:
			return nil
		case <-time.After(10 * time.Second):
			t.Errorf("piece %d (%q) hadn't reached the client 10 s after the model gave it", i, pieces[i].Text)
			return context.DeadlineExceeded
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	_, _, url := countedRig(t, p)
	chunks := say(t, url, "link:slow-pieces", "hello", func(text string) { seen <- text })
	if want := []string{"one two ", "three four"}; strings.Join(chunks, "|") != strings.Join(want, "|") {
		t.Fatalf("chunks %q, want %q", chunks, want)
	}
}

// A message that joins a running turn is answered steered as soon as it
// is stored: its _link/taken and its answer go in one write.
func TestSteeredWritesTakenWithAnswer(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p := piecesModel{pieces: []model.Delta{{Text: "both done"}}, after: func(ctx context.Context, i int) error {
		once.Do(func() { close(reached) })
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	_, ln, url := countedRig(t, p)
	const thread = "telegram:77"
	first := make(chan error, 1)
	go func() {
		_, err := sayErr(t.Context(), url, thread, "find my keys", nil)
		first <- err
	}()
	<-reached // the first turn's model is streaming
	say(t, url, thread, "and my wallet", nil)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	var steered []string
	for _, c := range ln.Conns() {
		frames, err := c.Frames()
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.Join(frames, " | "); !strings.Contains(s, "agent_message_chunk") {
			steered = append(steered, s)
		}
	}
	want := "result | result+available_commands_update | _link/taken+result | close"
	if len(steered) != 1 || steered[0] != want {
		t.Errorf("the steered message's writes after the upgrade: %q, want one connection's %q", steered, want)
	}
}

// An owner's command is answered at once: its _link/taken goes with the
// chunk saying what holds now, in one write, then the answer.
func TestCommandWritesTakenWithChunk(t *testing.T) {
	_, ln, url := countedRig(t, piecesModel{})
	chunks := say(t, url, "telegram:78", "/chat:verbose on", nil)
	if len(chunks) != 1 || !strings.Contains(chunks[0], "shown") {
		t.Fatalf("the command answered %q", chunks)
	}
	frames := onlyConnFrames(t, ln)
	want := "result | result+available_commands_update | _link/taken+agent_message_chunk | result | close"
	if got := strings.Join(frames, " | "); got != want {
		t.Errorf("the command's writes after the upgrade:\n%s\nwant\n%s", got, want)
	}
}

// A round's calls, begun together, are streamed as their tool_calls in
// one write; each call's end goes as it comes.
func TestCallsWriteTheirStartsTogether(t *testing.T) {
	search := func(id string) model.ToolCall {
		return model.ToolCall{ID: id, Name: "memory__search", Input: `{"q":"` + id + `"}`}
	}
	p := scripted.New(model.Response{Calls: []model.ToolCall{search("c1"), search("c2"), search("c3")}}, model.Response{Text: "found them"})
	_, ln, url := countedRig(t, p)
	if got := strings.Join(say(t, url, "telegram:79", "find them", nil), ""); got != "found them" {
		t.Fatalf("streamed %q", got)
	}
	frames := onlyConnFrames(t, ln)
	starts, ends := 0, 0
	for _, f := range frames {
		switch f {
		case "tool_call+tool_call+tool_call":
			starts++
		case "tool_call_update":
			ends++
		}
	}
	if starts != 1 || ends != 3 {
		t.Errorf("writes after the upgrade %q: want the three tool_calls in one, each tool_call_update in its own", frames)
	}
}

// onlyConnFrames is what each write after the upgrade carried, frame by
// frame, on the one connection ln accepted.
func onlyConnFrames(t *testing.T, ln *endpointtest.WritesListener) []string {
	t.Helper()
	conns := ln.Conns()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want 1", len(conns))
	}
	frames, err := conns[0].Frames()
	if err != nil {
		t.Fatal(err)
	}
	return frames
}
