package endpoint

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// echo is the tests' agent: it says taken, streams "echo: <text>" and
// ends the turn at once.
type echo struct {
	mu      sync.Mutex
	prompts []acp.Prompt
	health  error
}

func (a *echo) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, p)
	a.mu.Unlock()
	s.Taken(ctx)
	s.Chunk(ctx, "echo: "+acp.TextOf(p.Blocks))
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

func (a *echo) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	return contract.RecoverResult{}, nil
}

func (a *echo) Health(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.health
}

// countingListener records each connection it accepts.
type countingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *countingListener) accepted() []net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]net.Conn(nil), l.conns...)
}

// testAgents: main of one owner, "shared" held by two owners, and "solo".
var testAgents = []Agent{
	{Name: "main", Key: []byte("key-main")},
	{Name: "shared", ID: "owner-a/shared", Key: []byte("key-shared-a")},
	{Name: "shared", ID: "owner-b/shared", Key: []byte("key-shared-b")},
	{Name: "solo", ID: "owner-a/solo", Key: []byte("key-solo")},
}

type testServer struct {
	*Server
	url   string
	ln    *countingListener
	agent *echo
	done  chan error
}

// start serves cfg (its agents and handler filled when empty) on
// 127.0.0.1:0 until the test ends.
func start(t *testing.T, cfg Config) *testServer {
	t.Helper()
	a := &echo{}
	if cfg.Agents == nil {
		cfg.Agents = testAgents
	}
	if cfg.Handler == nil {
		cfg.Handler = AgentHandler{Agent: a}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, url: "http://" + ln.Addr().String() + contract.ACPPath, ln: &countingListener{Listener: ln}, agent: a, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { ts.done <- s.Serve(ctx, ts.ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(5 * time.Second):
			t.Error("serve did not return after its context ended")
		}
	})
	return ts
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// message runs one message over c: initialize, resume, prompt; it
// returns the answer and its chunks' text.
func message(ctx context.Context, c *ClientConn, thread, text string) (acp.PromptResult, string, error) {
	var chunks strings.Builder
	cl := acp.NewClient(ctx, c, func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if method == acp.MethodSessionUpdate && json.Unmarshal(params, &n) == nil && json.Unmarshal(n.Update, &u) == nil && u.Content != nil {
			chunks.WriteString(u.Content.Text)
		}
	})
	if _, err := cl.Initialize(ctx); err != nil {
		cl.Close()
		return acp.PromptResult{}, "", err
	}
	if err := cl.Resume(ctx, thread); err != nil {
		cl.Close()
		return acp.PromptResult{}, "", err
	}
	res, err := cl.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	if err != nil {
		cl.Close()
		return res, "", err
	}
	// A clean close is part of a message: it must say nil.
	return res, chunks.String(), cl.Close()
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// got is the prompts the agent has had.
func (a *echo) got() []acp.Prompt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]acp.Prompt(nil), a.prompts...)
}
