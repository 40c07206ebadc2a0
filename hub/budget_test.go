package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// TestPromptBudget: the hub bounds the agent's prompts in flight as Link
// Harness does (the endpoint's acp.Budget, over all its connections): a
// prompt past the bound while another is in flight is refused with an
// error saying so, and the harness never sees it; once the first turn is
// answered its bytes go, and the same prompt passes.
func TestPromptBudget(t *testing.T) {
	r := newRig(t, nil, nil)
	r.maxPrompt = 64 << 10
	r.restart()
	ctx := testCtx(t, 20*time.Second)
	pad := strings.Repeat("p", 40<<10) + "\n"
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	held := make(chan *exchange, 1)
	go func() { held <- s.prompt(ctx, pad+"wait", nil) }()
	if err := s.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	e := r.message(ctx, "telegram:2", pad+"second", nil)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || !strings.Contains(rpcErr.Message, "past its bound of 0.1 MiB") {
		t.Fatalf("a prompt past the bound was answered %v, want an error naming the bound", e.err)
	}
	if got := r.agentLog("prompt "); len(got) != 1 {
		t.Fatalf("the harness was sent %d prompts, want the held one alone", len(got))
	}
	s.c.Cancel(ctx, "telegram:1")
	<-held
	if got := r.message(ctx, "telegram:2", pad+"second", nil).must(t); got != "echo: "+pad+"second" {
		t.Errorf("after the held turn was answered, the prompt came back as %d bytes", len(got))
	}
}

// TestBudgetChargedAsRead: as Link Harness's (acp's TestBudgetChargedAsRead),
// the hub's prompts are charged to the agent's budget as they are read,
// each message whole from its frame's length, or part by part when it
// comes in fragments (the first two sent before the others): of eight
// prompts of 1 MiB sent at once with room for two and a half, two reach
// the harness, the six others are read past and refused under their ids,
// saying the bound and that none of them was kept; the bytes in flight
// are the two running turns' frames, and none once they end. Before, the
// hub read each whole and charged it after, so its refusal came only once
// the whole message was held.
//
// The test waits on the work alone, so its deadline, long enough for a
// race-built hub on a loaded machine, costs nothing when it passes.
func TestBudgetChargedAsRead(t *testing.T) {
	const size = 1 << 20
	for _, fragmented := range []bool{false, true} {
		t.Run(fmt.Sprintf("fragmented=%v", fragmented), func(t *testing.T) {
			r := newRig(t, nil, nil)
			r.maxPrompt = size*2 + size/2
			r.restart()
			ctx := testCtx(t, 2*time.Minute)
			budget := r.srv.Budget("main", "")
			text := strings.Repeat("a", size) + "\nwait"
			msg := func(i int) []byte {
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"telegram:%d","prompt":[{"type":"text","text":%q}]}}`, 100+i, i, text)
			}
			msgLen := int64(len(msg(0)))
			started := make(chan int, 8)
			startedOne := func() int {
				t.Helper()
				select {
				case i := <-started:
					return i
				case <-ctx.Done():
					t.Fatalf("a turn within the bound never started: %v", ctx.Err())
					return 0
				}
			}
			results := make(chan error, 8)
			conns := make([]*websocket.Conn, 8)
			for i := range 8 {
				c := openRawThread(t, ctx, r, fmt.Sprintf("telegram:%d", i))
				conns[i] = c
				if fragmented && i == 2 {
					startedOne()
					startedOne()
				}
				go func() {
					var err error
					if fragmented {
						err = sendFragmented(ctx, c, msg(i))
					} else {
						err = c.Write(ctx, websocket.MessageText, msg(i))
					}
					if err == nil {
						err = promptAnswer(ctx, c, i, started)
					}
					results <- err
				}()
			}
			var held []int
			if !fragmented {
				held = append(held, startedOne(), startedOne())
			}
			for range 6 {
				err := <-results
				var rpcErr *acp.Error
				if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "past its bound of 2.5 MiB") || !strings.Contains(rpcErr.Message, "nothing of it was kept") {
					t.Fatalf("a prompt past the bound was answered %v, want it read past and refused", err)
				}
			}
			if fragmented {
				held = []int{0, 1}
			}
			if n := budget.InFlight(); n != 2*msgLen {
				t.Fatalf("%d bytes in flight with two turns of %d running", n, msgLen)
			}
			if got := r.agentLog("prompt "); len(got) != 2 {
				t.Fatalf("the harness was sent %d prompts, want 2", len(got))
			}
			for _, i := range held {
				cancel := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"telegram:%d"}}`, i)
				if err := conns[i].Write(ctx, websocket.MessageText, cancel); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if err := <-results; err != nil {
					t.Fatalf("a prompt within the bound: %v", err)
				}
			}
			if n := budget.InFlight(); n != 0 {
				t.Fatalf("%d bytes still in flight once every turn ended", n)
			}
		})
	}
}

// openRawThread dials r's endpoint and opens thread on it, returning the
// raw WebSocket.
func openRawThread(t *testing.T, ctx context.Context, r *rig, thread string) *websocket.Conn {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.url, Key: r.key, Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Conn()
	c.SetReadLimit(-1)
	t.Cleanup(func() { c.CloseNow() })
	for i, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":%q,"cwd":"/"}}`, thread),
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), fmt.Sprintf(`"id":%d`, i+1)) {
				break
			}
		}
	}
	return c
}

// sendFragmented writes msg as one message in frames of 64 KiB.
func sendFragmented(ctx context.Context, c *websocket.Conn, msg []byte) error {
	w, err := c.Writer(ctx, websocket.MessageText)
	if err != nil {
		return err
	}
	for len(msg) > 0 {
		n := min(len(msg), 64<<10)
		if _, err := w.Write(msg[:n]); err != nil {
			return err
		}
		msg = msg[n:]
	}
	return w.Close()
}

// promptAnswer reads c until the answer of prompt i (id 100+i), returning
// its error; started is sent i when the harness streams "waiting".
func promptAnswer(ctx context.Context, c *websocket.Conn, i int, started chan<- int) error {
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return err
		}
		var m struct {
			ID     json.RawMessage
			Error  *acp.Error
			Params struct {
				Update struct {
					Content struct{ Text string }
				}
			}
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if m.Params.Update.Content.Text == "waiting" {
			started <- i
		}
		if string(m.ID) == fmt.Sprint(100+i) {
			if m.Error != nil {
				return m.Error
			}
			return nil
		}
	}
}
