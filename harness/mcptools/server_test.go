package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/store"
)

// mcpServer is a real MCP server of the go-sdk over Streamable HTTP on
// 127.0.0.1:0, recording what reaches it: sessions started and ended,
// each call and its _meta.
type mcpServer struct {
	t    testing.TB
	name string
	srv  *httptest.Server

	handler func() http.Handler // makes a handler with no session

	mu       sync.Mutex
	h        http.Handler   // serves now
	sessions int            // sessions started (initialize)
	deletes  int            // sessions ended by the client (DELETE)
	lists    int            // tools/list asked
	calls    map[string]int // calls made, by call
	metas    []mcp.Meta     // each call's _meta, in order
	args     []string       // each call's arguments
	started  chan string    // each call's name, as it starts
	release  chan struct{}  // block waits for it
	once     sync.Once
}

// serverOpts say what a test server lists and how it behaves.
type serverOpts struct {
	instructions string
	calls        []string // listed in this order, unless reversed
	reverse      bool     // list the calls in reverse order of name
}

// newMCPServer starts a server listing opts.calls. Each call answers
// "<name> says <call> <args>", but: "big" answers 1 MiB, "block" waits
// for release (or its request's end), "fail" answers as an error.
func newMCPServer(t testing.TB, name string, opts serverOpts) *mcpServer {
	t.Helper()
	s := &mcpServer{t: t, name: name, calls: map[string]int{}, started: make(chan string, 64), release: make(chan struct{})}
	server := func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{Instructions: opts.instructions})
		for _, c := range opts.calls {
			srv.AddTool(&mcp.Tool{
				Name:        c,
				Description: name + "'s " + c,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}, "a": map[string]any{"type": "integer"}}},
			}, s.handle)
		}
		if opts.reverse {
			srv.AddReceivingMiddleware(reverseLists)
		}
		return srv
	}
	s.handler = func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server() }, nil)
	}
	s.h = s.handler()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.note(r)
		s.mu.Lock()
		h := s.h
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.close)
	return s
}

// reverseLists lists a server's calls in reverse order of name.
func reverseLists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			slices.SortFunc(r.Tools, func(a, b *mcp.Tool) int { return strings.Compare(b.Name, a.Name) })
		}
		return res, err
	}
}

// note counts a request's session start, end or listing.
func (s *mcpServer) note(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodDelete {
		s.deletes++
		return
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg)
	switch msg.Method {
	case "initialize":
		s.sessions++
	case "tools/list":
		s.lists++
	}
}

func (s *mcpServer) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	s.mu.Lock()
	s.calls[name]++
	s.metas = append(s.metas, req.Params.Meta)
	s.args = append(s.args, string(req.Params.Arguments))
	s.mu.Unlock()
	select {
	case s.started <- name:
	default: // nobody is watching
	}
	switch name {
	case "big":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 1<<19)}}}, nil
	case "block":
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "fail":
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.name + " says " + name + " " + string(req.Params.Arguments)}}}, nil
}

// counts are a server's sessions started and ended, and its calls.
func (s *mcpServer) counts() (sessions, deletes, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.calls {
		calls += n
	}
	return s.sessions, s.deletes, calls
}

// forget starts the server over at the same address: every session it
// had is gone, and a request naming one is answered 404.
func (s *mcpServer) forget() {
	h := s.handler()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = h
}

func (s *mcpServer) url() string { return s.srv.URL }

// releaseBlocked lets every call of block go, now and after.
func (s *mcpServer) releaseBlocked() { s.once.Do(func() { close(s.release) }) }

func (s *mcpServer) close() {
	s.releaseBlocked()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// hangServer accepts connections and answers nothing, noting when a
// request's connection is closed by the client.
type hangServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	asked  int
	closed chan struct{} // a request ended by its client
	once   sync.Once
}

func newHangServer(t *testing.T) *hangServer {
	h := &hangServer{closed: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.asked++
		h.mu.Unlock()
		// Read to the end, so the server sees the connection close.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		h.once.Do(func() { close(h.closed) })
	}))
	t.Cleanup(func() {
		h.srv.CloseClientConnections()
		h.srv.Close()
	})
	return h
}

func (h *hangServer) requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked
}

// testCtx bounds a test's network waits: it ends with the test, and a
// minute on at most, so a server that never answers fails the test
// rather than hangs it.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// clock is a test's clock, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one agent's environment, changed by tests as they go.
type env struct {
	mu   sync.Mutex
	vars map[string]string
}

func (e *env) get(string) map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]string, len(e.vars))
	for k, v := range e.vars {
		out[k] = v
	}
	return out
}

func (e *env) set(k, v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v == "" {
		delete(e.vars, k)
		return
	}
	e.vars[k] = v
}

// pathsAt gives each agent's paths under home.
func toolListsAt(home string) func(string) (string, error) {
	return func(agent string) (string, error) {
		p, err := store.For(home, agent)
		return p.ToolLists(), err
	}
}

// newTools makes a Tools of vars for agents at home, closed with the test.
func newTools(t *testing.T, home string, e *env, edit ...func(*Config)) *Tools {
	t.Helper()
	cfg := Config{
		Env:       e.get,
		ToolLists: toolListsAt(home),
	}
	for _, f := range edit {
		f(&cfg)
	}
	tt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tt.Close() })
	return tt
}

// listsFile reads agent's tool-lists.json at home.
func readListsFile(t *testing.T, home, agent string) []byte {
	t.Helper()
	p, err := store.For(home, agent)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.ToolLists())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
