package acp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
)

// TestCancelRequest: a call given up on by a Conn that sends cancels is
// named to the peer by $/cancel_request, which closes the peer's
// Request.Cancelled, and the peer's answer then is dropped; one of a
// Conn that doesn't (a bridge's Client) is not; a $/cancel_request naming
// a request answered already changes nothing, and reaches the handler.
func TestCancelRequest(t *testing.T) {
	for _, send := range []bool{true, false} {
		var mu sync.Mutex
		var notes []string
		took := make(chan *Request, 1)
		a, _ := pair(t, nil, func(ctx context.Context, r *Request) {
			if r.IsNotification() {
				mu.Lock()
				notes = append(notes, r.Method+" "+string(r.Params))
				mu.Unlock()
				return
			}
			switch r.Method {
			case "slow":
				took <- r
				go func() {
					<-r.Cancelled()
					r.Fail(ctx, Errorf(CodeRequestCancelled, "cancelled"))
				}()
			default:
				r.Reply(ctx, "pong")
			}
		})
		if send {
			a.SendCancels()
		}
		ctx := testCtx(t)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := a.Call(cctx, "slow", nil)
			done <- err
		}()
		r := <-took
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("a call given up on returned %v", err)
		}
		if send {
			<-r.Cancelled() // the test's deadline fails it if never
		}
		if _, err := a.Call(ctx, "ping", nil); err != nil {
			t.Fatal(err)
		}
		if !send {
			select {
			case <-r.Cancelled():
				t.Error("a Conn that sends no cancels cancelled a call")
			default:
			}
		}
		// A cancel of an answered request: nothing to close, the handler told.
		if err := a.Notify(ctx, MethodCancelRequest, json.RawMessage(`{"requestId":2}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Call(ctx, "ping", nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		want := 1
		if send {
			want = 2
		}
		if len(notes) != want || notes[len(notes)-1] != `$/cancel_request {"requestId":2}` {
			t.Errorf("sends cancels %v: the handler was told %q", send, notes)
		}
		mu.Unlock()
	}
}

// FuzzCancelRequest proves a $/cancel_request's params, whatever the peer
// sends, never panic the Conn, and close the Cancelled of the one
// unanswered request whose id they name as it came, or of none.
func FuzzCancelRequest(f *testing.F) {
	for _, s := range []string{`{"requestId":1}`, `{"requestId":"1"}`, `{"requestId":null}`, `{}`, `[1]`, `{"requestId":{"a":1}}`, `{"requestId": 1 }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		c := NewConn(nil, nil)
		ids := []string{`1`, `"1"`, `"a"`}
		var rs []*Request
		for _, id := range ids {
			r := &Request{ID: json.RawMessage(id), Method: "m", conn: c}
			c.track(r)
			rs = append(rs, r)
		}
		c.track(&Request{Method: MethodCancelRequest, Params: params, conn: c})
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		named := ""
		if json.Unmarshal(params, &p) == nil {
			named = string(p.RequestID)
		}
		for i, r := range rs {
			select {
			case <-r.Cancelled():
				if ids[i] != named {
					t.Fatalf("%s cancelled request %s", params, ids[i])
				}
			default:
			}
		}
	})
}
