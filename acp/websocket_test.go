package acp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/lnk-dev/link/internal/testwait"
)

// A read blocked under a context ends when that context does, whether
// it is the context watched once for the connection or another; a call
// with the watched context after another's goes on working.
func TestWebSocketContextEnds(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if string(b) == "quiet" {
				continue
			}
			c.Write(context.Background(), typ, b)
		}
	}))
	t.Cleanup(echo.Close)
	url := "ws" + strings.TrimPrefix(echo.URL, "http")

	for _, first := range []bool{true, false} {
		f := dialWS(t, url)
		life, end := context.WithCancel(context.Background())
		if !first {
			// The life is watched first; the call to end is another's.
			if err := f.WriteMessage(life, []byte("ping")); err != nil {
				t.Fatal(err)
			}
			if b, err := f.ReadMessage(life); err != nil || string(b) != "ping" {
				t.Fatalf("echo %q, %v", b, err)
			}
			other, stop := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, stop)
			if _, err := f.ReadMessage(other); err == nil {
				t.Fatal("a read went on past its context's end")
			}
			end()
			continue
		}
		if err := f.WriteMessage(life, []byte("quiet")); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.ReadMessage(life)
			done <- err
		}()
		testwait.For(t, 5*time.Second, "the read to block", func() bool { return blockedIn("acp.(*WebSocket).ReadMessage") })
		end()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("read returned no error after its context ended")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a read under the watched context went on past its end")
		}
	}
}

// blockedIn says whether a goroutine's stack holds fn (a function's name
// as a stack shows it) under a wait: a read that has begun and waits on
// the connection.
func blockedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, fn) && (strings.Contains(g, "[select") || strings.Contains(g, "[IO wait") || strings.Contains(g, "[chan receive")) {
			return true
		}
	}
	return false
}
