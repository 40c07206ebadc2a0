package endpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
)

// rawConn opens a TCP connection to ts, closed when the test ends.
func rawConn(t *testing.T, ts *testServer) net.Conn {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.url, "http://"), contract.ACPPath)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed reads c until the endpoint closes it, and fails if that
// hasn't happened within limit (the test's own bound, well past the
// endpoint's). It returns what was read.
func waitClosed(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the endpoint still holds the connection after %v (read %q)", limit, b)
	}
	return string(b)
}

// TestBoundedReads: a request that stops half way (headers never
// finished, a body announced and never sent, plain or chunked, a proof
// never followed by its upgrade) has its connection closed within the
// read timeout, never held.
func TestBoundedReads(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := start(t, Config{ReadTimeout: timeout})
	challenge := strings.Repeat("ab", 16)
	for _, tc := range []struct{ name, req, want string }{
		{"headers never finished", "GET /_link/proof HTTP/1.1\r\nHost: x\r\n", ""},
		{"proof announcing a body", "GET /_link/proof HTTP/1.1\r\nHost: x\r\nLink-Challenge: " + challenge + "\r\nContent-Length: 1000\r\n\r\n", "400 Bad Request"},
		{"proof chunked", "GET /_link/proof HTTP/1.1\r\nHost: x\r\nLink-Challenge: " + challenge + "\r\nTransfer-Encoding: chunked\r\n\r\n", "400 Bad Request"},
		{"health announcing a body", "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", "400 Bad Request"},
		{"health chunked, a chunk begun", "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nab", "400 Bad Request"},
		{"proof never upgraded", "GET /_link/proof HTTP/1.1\r\nHost: x\r\nLink-Challenge: " + challenge + "\r\n\r\n", "200 OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawConn(t, ts)
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			got := waitClosed(t, c, 30*timeout) // generous for a loaded machine: never held is the point
			if !strings.Contains(got, tc.want) {
				t.Fatalf("answered %q, want %q", got, tc.want)
			}
		})
	}
}

// gate is an agent whose turn runs until its channel is closed or its
// time is up.
type gate struct {
	echo
	turn time.Duration
}

func (g *gate) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	s.Taken(ctx)
	select {
	case <-time.After(g.turn):
	case <-ctx.Done():
		return acp.Outcome{}, ctx.Err()
	}
	s.Chunk(ctx, "done")
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

// ended is a Handler that says when each connection's serving ended.
type ended struct {
	Handler
	done chan struct{}
}

func (e ended) ServeACP(ctx context.Context, req Request, f acp.Framer) {
	e.Handler.ServeACP(ctx, req, f)
	e.done <- struct{}{}
}

// TestQuietWebSocket: an upgraded connection whose client reads nothing,
// so never answers a ping, is closed; one waiting on a turn four pings
// long is answered, its client answering the pings.
func TestQuietWebSocket(t *testing.T) {
	const ping = 300 * time.Millisecond
	g := &gate{turn: 4 * ping}
	h := ended{Handler: AgentHandler{Agent: g}, done: make(chan struct{}, 4)}
	ts := start(t, Config{Ping: ping, Handler: h})
	ctx := testCtx(t)

	// Answered: the turn outlasts several pings.
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := message(ctx, c, "link:long", "hi"); err != nil || text != "done" {
		t.Fatalf("a turn of %v over pings every %v: %q, %v", g.turn, ping, text, err)
	}
	select {
	case <-h.done:
	case <-time.After(20 * ping):
		t.Fatalf("the answered connection's serving didn't end within %v", 20*ping)
	}

	// Silent: upgraded, then nothing read, so no pong.
	quiet, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.CloseNow()
	select {
	case <-h.done:
	case <-time.After(20 * ping):
		t.Fatalf("a connection that answers no ping is still served after %v", 20*ping)
	}
}

// TestUpgradedOutlivesReadTimeout: the request's read timeout doesn't
// hold for the WebSocket it upgrades to: a turn longer than it, with
// nothing read meanwhile, is answered.
func TestUpgradedOutlivesReadTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ts := start(t, Config{ReadTimeout: timeout, Handler: AgentHandler{Agent: &gate{turn: 4 * timeout}}})
	ctx := testCtx(t)
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := message(ctx, c, "link:long", "hi"); err != nil || text != "done" {
		t.Fatalf("a turn of %v past a read timeout of %v: %q, %v", 4*timeout, timeout, text, err)
	}
}

// TestUnkeyedCap: connections without a key, held open, are held at most
// MaxUnkeyed at once, the oldest closed, and a message with the key is
// answered meanwhile.
func TestUnkeyedCap(t *testing.T) {
	const cap, flood = 8, 60
	ts := start(t, Config{MaxUnkeyed: cap})
	for i := 0; i < flood; i++ {
		rawConn(t, ts)
	}
	ctx := testCtx(t)
	testwait.For(t, 10*time.Second, fmt.Sprintf("the %d connections accepted", flood), func() bool {
		st := ts.Unkeyed()
		return st.Held+st.Evicted >= flood
	})
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := message(ctx, c, "link:x", "hi"); err != nil || text != "echo: hi" {
		t.Fatalf("the keyed message: %q, %v", text, err)
	}
	st := ts.Unkeyed()
	if st.Most > cap || st.Evicted < flood-cap {
		t.Fatalf("held %+v, want at most %d at once and %d evicted", st, cap, flood-cap)
	}
}

// logLines is a slog handler's output, safe for the server's goroutines.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// TestRefusalsLogged: 300 wrong keys are two log lines, the first
// refusal and then the count of the rest, and no line holds a key.
func TestRefusalsLogged(t *testing.T) {
	var out logLines
	ts := start(t, Config{LogEvery: time.Hour, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	ctx := testCtx(t)
	const tries = 300
	for i := 0; i < tries; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url, nil)
		req.Header.Set(contract.HeaderAuthorization, contract.BearerPrefix+"wrong-key-guess")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	lines := out.lines()
	if len(lines) != 2 || !strings.Contains(lines[0], "status=401") || !strings.Contains(lines[1], "count=299") || !strings.Contains(lines[1], "401 /acp: 299") {
		t.Fatalf("logged %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.Contains(l, "wrong-key-guess") || strings.Contains(l, "key-main") {
			t.Fatalf("a key was logged: %s", l)
		}
	}
}

// held is an agent whose turns run until release is closed, counting
// the prompts it has had.
type held struct {
	echo
	started chan struct{}
	release chan struct{}
}

func (h *held) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	h.mu.Lock()
	h.prompts = append(h.prompts, p)
	h.mu.Unlock()
	h.started <- struct{}{}
	<-h.release
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

// TestPromptBytesBounded: past MaxPromptBytes of prompts in flight for
// an agent, over its connections, a prompt is refused with a JSON-RPC
// error saying so and never reaches the agent; once the turns are
// answered, the same prompt is taken.
func TestPromptBytesBounded(t *testing.T) {
	const size = 3 << 20
	h := &held{started: make(chan struct{}, 4), release: make(chan struct{})}
	ts := start(t, Config{MaxPromptBytes: 2*size + size/2, Handler: AgentHandler{Agent: h}})
	var release sync.Once
	free := func() { release.Do(func() { close(h.release) }) }
	t.Cleanup(free) // a test that fails early ends its held turns, not hangs on them
	// Three prompts of 3 MiB take seconds under -race on a loaded
	// machine: a minute, not testCtx's ten seconds.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	big := []acp.Block{{Type: "text", Text: strings.Repeat("a", size)}}
	send := func(thread string) (*acp.Client, chan error) {
		c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
		if err != nil {
			t.Fatal(err)
		}
		cl := acp.NewClient(ctx, c, nil)
		t.Cleanup(func() { cl.Close() })
		if _, err := cl.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.Resume(ctx, thread); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := cl.Prompt(ctx, thread, big, nil)
			done <- err
		}()
		return cl, done
	}
	_, first := send("link:a")
	<-h.started
	_, second := send("link:b")
	<-h.started
	_, third := send("link:c")
	err := <-third
	var e *acp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "past its bound of 7.5 MiB") {
		t.Fatalf("a third prompt of %d bytes past the bound: %v", size, err)
	}
	if got := len(h.got()); got != 2 {
		t.Fatalf("the agent had %d prompts, want 2: the refused one never reaches it", got)
	}
	free()
	for _, done := range []chan error{first, second} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.Budget("main", "").InFlight(); n != 0 {
		t.Fatalf("%d bytes still counted in flight after the turns were answered", n)
	}
	h.release = make(chan struct{})
	close(h.release)
	_, again := send("link:c")
	<-h.started
	if err := <-again; err != nil {
		t.Fatalf("the same prompt once the others were answered: %v", err)
	}
}
