package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// heldAgent holds each turn until release is closed, keeping the prompts
// it had.
type heldAgent struct {
	scripted
}

func (a *heldAgent) Prompt(ctx context.Context, p Prompt, s Stream) (Outcome, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, p)
	a.mu.Unlock()
	a.started <- struct{}{}
	<-a.release
	return Outcome{StopReason: StopEndTurn}, nil
}

// budgetServer serves a over real WebSockets with prompts in flight bounded
// by budget.
func budgetServer(t *testing.T, a Agent, budget *Budget) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		f := NewWebSocket(c, 0)
		ServeBounded(context.Background(), f, "main", nil, a, budget)
		f.CloseNow()
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// rawPrompt is a session/prompt of id in link:t holding text, as a
// client writes it; idLast puts its id after its params.
func rawPrompt(id int, text string, idLast bool) []byte {
	params := fmt.Sprintf(`{"sessionId":"link:t","prompt":[{"type":"text","text":%q}]}`, text)
	if idLast {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/prompt","params":%s,"id":%d}`, params, id)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":%s}`, id, params)
}

// open dials url and opens link:t, returning the raw connection.
func openRaw(t *testing.T, ctx context.Context, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	t.Cleanup(func() { c.CloseNow() })
	for i, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"link:t","cwd":"/"}}`,
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

// sendFragmented writes msg as a text message in frames of at most 64 KiB,
// so the reader can't know its length from its first frame.
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

// answerTo reads c until the response of id, returning its error.
func answerTo(ctx context.Context, c *websocket.Conn, id string) (*Error, error) {
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var m struct {
			ID    json.RawMessage
			Error *Error
		}
		if json.Unmarshal(b, &m) == nil && string(m.ID) == id {
			return m.Error, nil
		}
	}
}

// TestBudgetChargedAsRead: eight prompts of 1 MiB sent at once to an
// agent whose budget holds two and a half are charged as they are read,
// each message whole from its frame's length (or part by part when it
// comes in fragments, the first two sent before the others): two reach
// the agent, the six others are refused
// with a JSON-RPC error under their ids saying the bound and that none
// of them was kept, and the bytes counted in flight never pass the bound
// and are all given back once the turns end. A prompt is far over the
// 8 KiB read before its length is known and is sixteen fragments; the
// test waits on the work alone, so its minute's deadline (race-built,
// on a loaded machine, 8 MiB pass through JSON and WebSockets) costs
// nothing when it passes.
func TestBudgetChargedAsRead(t *testing.T) {
	const size = 1 << 20
	for _, fragmented := range []bool{false, true} {
		t.Run(fmt.Sprintf("fragmented=%v", fragmented), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			a := &heldAgent{scripted: scripted{release: make(chan struct{}), started: make(chan struct{}, 8)}}
			started := func() {
				t.Helper()
				select {
				case <-a.started:
				case <-ctx.Done():
					t.Fatalf("a turn within the bound never started: %v", ctx.Err())
				}
			}
			budget := NewBudget(size*2 + size/2)
			url := budgetServer(t, a, budget)
			text := strings.Repeat("a", size)
			msgLen := int64(len(rawPrompt(100, text, false)))
			results := make(chan error, 8)
			for i := range 8 {
				c := openRaw(t, ctx, url)
				if fragmented && i == 2 {
					// Fragments are charged as they come: sent at once,
					// several prompts could each hold a part of the bound
					// and all be refused. The two first are sent alone.
					started()
					started()
				}
				go func() {
					msg := rawPrompt(100+i, text, false)
					var err error
					if fragmented {
						err = sendFragmented(ctx, c, msg)
					} else {
						err = c.Write(ctx, websocket.MessageText, msg)
					}
					if err != nil {
						results <- err
						return
					}
					rpcErr, err := answerTo(ctx, c, fmt.Sprint(100+i))
					switch {
					case err != nil:
						results <- fmt.Errorf("prompt %d: %w", i, err)
					case rpcErr == nil:
						results <- nil
					default:
						results <- rpcErr
					}
				}()
			}
			// Two turns start and hold their bytes; the six others are
			// refused meanwhile, their bytes given back.
			if !fragmented {
				started()
				started()
			}
			for range 6 {
				err := <-results
				var rpcErr *Error
				if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "past its bound of 2.5 MiB") || !strings.Contains(rpcErr.Message, "nothing of it was kept") {
					t.Fatalf("a prompt past the bound was answered %v", err)
				}
			}
			if n := budget.InFlight(); n != 2*msgLen {
				t.Fatalf("%d bytes in flight with two turns of %d running", n, msgLen)
			}
			close(a.release)
			for range 2 {
				if err := <-results; err != nil {
					t.Fatalf("a prompt within the bound: %v", err)
				}
			}
			if got := len(a.got()); got != 2 {
				t.Fatalf("the agent had %d prompts, want 2", got)
			}
			if n := budget.InFlight(); n != 0 {
				t.Fatalf("%d bytes still in flight once every turn ended", n)
			}
		})
	}
}

// got is the prompts a had.
func (a *scripted) got() []Prompt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Prompt(nil), a.prompts...)
}

// TestBudgetRefusedWithoutID: a message past the bound whose id comes
// after what the reader kept of it is refused under a null id, and the
// connection ends, since no call of the peer's can be answered.
func TestBudgetRefusedWithoutID(t *testing.T) {
	ctx := testCtx(t)
	a := &heldAgent{scripted: scripted{release: make(chan struct{}), started: make(chan struct{}, 1)}}
	url := budgetServer(t, a, NewBudget(1<<20))
	c := openRaw(t, ctx, url)
	if err := c.Write(ctx, websocket.MessageText, rawPrompt(7, strings.Repeat("a", 2<<20), true)); err != nil {
		t.Fatal(err)
	}
	rpcErr, err := answerTo(ctx, c, "null")
	if err != nil || rpcErr == nil || !strings.Contains(rpcErr.Message, "past its bound of 1.0 MiB") {
		t.Fatalf("answered %v, %v; want an error under a null id", rpcErr, err)
	}
	if _, _, err := c.Read(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the connection went on: %v", err)
	}
	if len(a.got()) != 0 {
		t.Fatal("the refused prompt reached the agent")
	}
}

// TestReadKnowsFrameLength: coder/websocket's message reader still says
// how much of an unfragmented, uncompressed message is left (frameLeft),
// so a large message is read into one slice of its length; a fragmented
// one's length isn't known until it ends.
func TestReadKnowsFrameLength(t *testing.T) {
	got := make(chan [2]any, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		for range 2 {
			_, rd, err := c.Reader(context.Background())
			if err != nil {
				return
			}
			io.ReadFull(rd, make([]byte, readFirst))
			left, ok := frameLeft(rd)
			got <- [2]any{left, ok}
			io.Copy(io.Discard, rd)
		}
	}))
	defer srv.Close()
	ctx := testCtx(t)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	msg := make([]byte, 1<<20)
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g[0] != int64(len(msg)-readFirst) || g[1] != true {
		t.Fatalf("frameLeft said %v, %v; want %d, true (has coder/websocket's msgReader changed?)", g[0], g[1], len(msg)-readFirst)
	}
	if err := sendFragmented(ctx, c, msg); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g[1] != false {
		t.Fatalf("frameLeft knew a fragmented message's length: %v", g)
	}
}

// FuzzPrefixID: the id read from a message's start is nil or an id
// member the whole message has.
func FuzzPrefixID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{}}`), 20)
	f.Add([]byte(`{"id":"a\"b","method":"x"}`), 9)
	f.Add([]byte(`{"params":{"id":3},"id":4,"method":"x"}`), 30)
	f.Fuzz(func(t *testing.T, b []byte, k int) {
		if k < 0 || k > len(b) {
			return
		}
		got := prefixID(b[:k])
		if got == nil || !json.Valid(b) {
			return
		}
		var ids [][]byte
		eachMember(b, func(key string, v []byte) error {
			if key == "id" {
				ids = append(ids, v)
			}
			return nil
		})
		for _, id := range ids {
			if bytes.Equal(id, got) {
				return
			}
		}
		t.Fatalf("%q: id %s from its first %d bytes; its ids are %q", b, got, k, ids)
	})
}
