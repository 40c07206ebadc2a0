package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// pair connects two Conns over stdio framing through pipes.
func pair(t *testing.T, ha, hb Handler) (a, b *Conn) {
	t.Helper()
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a = NewConn(NewStdio(ar, aw, 0), ha)
	b = NewConn(NewStdio(br, bw, 0), hb)
	ctx := testCtx(t)
	go a.Run(ctx)
	go b.Run(ctx)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestConcurrentWrites: messages written from many goroutines at once
// arrive whole and all, and calls get their own answers.
func TestConcurrentWrites(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	echo := func(ctx context.Context, r *Request) {
		if r.IsNotification() {
			mu.Lock()
			got[string(r.Params)]++
			mu.Unlock()
			return
		}
		go r.Reply(ctx, r.Params) // answered out of order, from other goroutines
	}
	a, _ := pair(t, nil, echo)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				p, _ := json.Marshal(map[string]int{"i": i, "j": j})
				if err := a.Notify(ctx, "n", json.RawMessage(p)); err != nil {
					t.Error(err)
					return
				}
				res, err := a.Call(ctx, "echo", json.RawMessage(p))
				if err != nil || string(res) != string(p) {
					t.Errorf("call %s answered %s, %v", p, res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 16*50 {
		t.Errorf("%d distinct notifications arrived, want %d", len(got), 16*50)
	}
}

// TestCallEnds: a call waits no longer than its context, an answered
// error is an *Error, and calls on an ended connection fail with
// ErrClosed.
func TestCallEnds(t *testing.T) {
	silent := func(ctx context.Context, r *Request) {
		if r.Method == "fail" {
			r.Fail(ctx, Errorf(CodeInvalidParams, "no"))
		}
	}
	a, b := pair(t, nil, silent)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := a.Call(ctx, "never", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unanswered call: %v, want its deadline", err)
	}
	var e *Error
	if _, err := a.Call(testCtx(t), "fail", nil); !errors.As(err, &e) || e.Code != CodeInvalidParams {
		t.Errorf("failed call: %v, want the peer's *Error", err)
	}
	pending := make(chan error, 1)
	go func() {
		_, err := a.Call(testCtx(t), "never", nil)
		pending <- err
	}()
	testwait.For(t, 5*time.Second, "the call to be pending", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.awaiting) == 1
	})
	b.Close()
	if err := <-pending; !errors.Is(err, ErrClosed) {
		t.Errorf("call pending as the peer went: %v, want ErrClosed", err)
	}
	<-a.Done()
	if _, err := a.Call(testCtx(t), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after the end: %v, want ErrClosed", err)
	}
	if err := a.Notify(testCtx(t), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("notify after the end: %v, want ErrClosed", err)
	}
}

// TestSetScrub: an error a Conn answers with is told scrubbed, its
// message and data, as a copy; data no longer JSON once scrubbed is told
// as a JSON string.
func TestSetScrub(t *testing.T) {
	c := NewConn(nil, nil)
	if e := (&Error{Code: 1, Message: "at secret"}); c.told(e) != e {
		t.Fatal("a Conn with no scrub changed the error")
	}
	c.SetScrub(func(s string) string { return strings.ReplaceAll(s, "secret", "<address>") })
	e := &Error{Code: 7, Message: "at secret", Data: json.RawMessage(`{"u":"secret"}`)}
	got := c.told(e)
	if got.Code != 7 || got.Message != "at <address>" || string(got.Data) != `{"u":"<address>"}` {
		t.Errorf("told %d %q %s", got.Code, got.Message, got.Data)
	}
	if e.Message != "at secret" || string(e.Data) != `{"u":"secret"}` {
		t.Errorf("the error itself was changed: %q %s", e.Message, e.Data)
	}
	c.SetScrub(func(s string) string { return strings.ReplaceAll(s, `"`, "") })
	if got := c.told(e); string(got.Data) != `"{u:secret}"` {
		t.Errorf("data scrubbed past JSON told as %s", got.Data)
	}
}
