package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// rig is a hub serving the scripted agent at a real endpoint on
// 127.0.0.1, and a bridge's client of it.
type rig struct {
	t     testing.TB
	hub   *Hub
	cfg   Config
	url   string
	key   []byte
	state string // the agent's folder: its sessions and log
	srv   *endpoint.Server
	// maxPrompt is the endpoint's bound of prompts in flight (0: its
	// default), read as the hub is served.
	maxPrompt int64
	// readLimit bounds a message the bridge's client reads (0:
	// acp.MaxMessage); a real bridge reads 16 MiB and a little.
	readLimit int64
	stop      context.CancelFunc
	done      chan struct{}
}

// agentCommand runs this test binary as the scripted agent.
func agentCommand() []string { return []string{os.Args[0]} }

// newRig starts a hub of the scripted agent; env is added to the agent's
// environment, cfg's fields may be changed by edit.
func newRig(t *testing.T, env []string, edit func(*Config)) *rig {
	t.Helper()
	state := t.TempDir()
	cfg := Config{
		Command:  agentCommand(),
		Env:      append(append(os.Environ(), "HUB_TEST_ROLE=agent", envState+"="+state), env...),
		Dir:      state,
		Sessions: filepath.Join(t.TempDir(), "sessions.json"),
		Grace:    200 * time.Millisecond,
	}
	if edit != nil {
		edit(&cfg)
	}
	r := &rig{t: t, cfg: cfg, state: state, key: []byte("hub-test-key")}
	r.start()
	t.Cleanup(r.close)
	return r
}

// start serves a new hub of r.cfg.
func (r *rig) start() {
	t := r.t
	hb, err := New(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := endpoint.New(endpoint.Config{Agents: []endpoint.Agent{{Name: "main", Key: r.key}}, Handler: hb, MaxPromptBytes: r.maxPrompt})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	r.hub, r.srv, r.stop, r.done = hb, srv, stop, make(chan struct{})
	r.url = "http://" + ln.Addr().String() + "/acp"
	go func() {
		defer close(r.done)
		srv.Serve(ctx, ln)
	}()
}

// close stops the endpoint and the hub.
func (r *rig) close() {
	if r.stop == nil {
		return
	}
	r.stop()
	<-r.done
	r.hub.Close()
	r.stop = nil
}

// restart closes the hub and serves a new one of the same config.
func (r *rig) restart() {
	r.close()
	r.start()
}

// exchange is one message: what streamed before its answer, and the answer.
type exchange struct {
	notes  []recvNote
	result json.RawMessage
	err    error
}

type recvNote struct {
	method string
	params json.RawMessage
	at     time.Time
}

// chunks are the texts of the agent_message_chunks streamed.
func (e *exchange) chunks() string {
	var b strings.Builder
	for _, n := range e.notes {
		if n.method != acp.MethodSessionUpdate {
			continue
		}
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		json.Unmarshal(n.params, &p)
		if p.Update.Kind == acp.UpdateMessageChunk {
			b.WriteString(p.Update.Content.Text)
		}
	}
	return b.String()
}

// session is a connection of a bridge's, initialized and its thread
// resumed.
type session struct {
	c      *acp.Client
	thread string

	mu    sync.Mutex
	notes []recvNote
	seen  chan struct{} // a note came
}

// open opens thread's session as a bridge does.
func (r *rig) open(ctx context.Context, thread string) (*session, error) {
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.url, Key: r.key, Agent: "main", ReadLimit: r.readLimit})
	if err != nil {
		return nil, err
	}
	s := &session{thread: thread, seen: make(chan struct{}, 1)}
	s.c = acp.NewClient(context.Background(), f, func(method string, params json.RawMessage) {
		s.mu.Lock()
		s.notes = append(s.notes, recvNote{method, append(json.RawMessage(nil), params...), time.Now()})
		s.mu.Unlock()
		select {
		case s.seen <- struct{}{}:
		default:
		}
	})
	if _, err := s.c.Initialize(ctx); err != nil {
		s.c.Close()
		return nil, err
	}
	if err := s.c.Resume(ctx, thread); err != nil {
		s.c.Close()
		return nil, err
	}
	return s, nil
}

// prompt sends text (and meta) and waits for the answer.
func (s *session) prompt(ctx context.Context, text string, meta json.RawMessage) *exchange {
	params := map[string]any{"sessionId": s.thread, "prompt": []acp.Block{{Type: "text", Text: text}}}
	if meta != nil {
		params["_meta"] = meta
	}
	res, err := s.c.Conn().Call(ctx, acp.MethodSessionPrompt, params)
	s.mu.Lock()
	defer s.mu.Unlock()
	return &exchange{notes: append([]recvNote(nil), s.notes...), result: res, err: err}
}

// waitChunk waits until the chunks streamed so far hold text.
func (s *session) waitChunk(ctx context.Context, text string) error {
	for {
		s.mu.Lock()
		e := &exchange{notes: s.notes}
		got := e.chunks()
		s.mu.Unlock()
		if strings.Contains(got, text) {
			return nil
		}
		select {
		case <-s.seen:
		case <-ctx.Done():
			return errors.New("no chunk " + text + " came; got " + got)
		}
	}
}

func (s *session) close() { s.c.Close() }

// message sends one message on a connection of its own, as a bridge does.
func (r *rig) message(ctx context.Context, thread, text string, meta json.RawMessage) *exchange {
	s, err := r.open(ctx, thread)
	if err != nil {
		return &exchange{err: err}
	}
	defer s.close()
	return s.prompt(ctx, text, meta)
}

// must fails the test unless e was answered; it returns the chunks.
func (e *exchange) must(t *testing.T) string {
	t.Helper()
	if e.err != nil {
		t.Fatalf("the message was answered %v", e.err)
	}
	return e.chunks()
}

// agentLog is the agent's log lines starting with prefix.
func (r *rig) agentLog(prefix string) []string {
	b, _ := os.ReadFile(filepath.Join(r.state, "log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
