package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/log"
)

const testAgent = "main"

// rig is a harness served on a real endpoint on 127.0.0.1:0, its
// conversations in real files, its model a scripted queue.
type rig struct {
	t     *testing.T
	home  string
	h     *Harness
	q     *scripted.Scripted
	tools *testTools
	url   string
	key   []byte
	srv   *endpoint.Server

	mu       sync.Mutex
	settings Settings
	seen     map[string][]model.Request // by thread
	gate     chan struct{}              // the next model call waits for it
	reached  chan struct{}              // closed when a call reaches the gate
	gateAt   int                        // the call the gate holds
	calls    int                        // model calls so far
}

// holdNext makes the next model call wait until the returned release is
// called; reached is closed once the call waits.
func (r *rig) holdNext() (reached <-chan struct{}, release func()) {
	r.mu.Lock()
	n := r.calls + 1
	r.mu.Unlock()
	return r.holdCall(n)
}

// holdCall makes the model's nth call (counting from 1, over every
// thread) wait until release is called.
func (r *rig) holdCall(n int) (reached <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, at := make(chan struct{}), make(chan struct{})
	r.gate, r.reached, r.gateAt = g, at, n
	var once sync.Once
	return at, func() { once.Do(func() { close(g) }) }
}

func (r *rig) before(ctx context.Context, req model.Request) error {
	r.mu.Lock()
	r.calls++
	g, at := r.gate, r.reached
	if g == nil || r.calls != r.gateAt {
		r.mu.Unlock()
		return nil
	}
	r.gate, r.reached = nil, nil
	r.mu.Unlock()
	close(at)
	select {
	case <-g:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newRig(t *testing.T, edit ...func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, home: t.TempDir(), q: scripted.New(), tools: newTestTools(), key: []byte("test-key-0123456789"), seen: map[string][]model.Request{}}
	r.q.Before = r.before
	r.settings = Settings{Model: "offline", Aliases: map[string]string{"fast": "anthropic/claude-test"}}
	cfg := Config{
		Home:    r.home,
		Drivers: testDrivers,
		Settings: func(ctx context.Context, p store.Paths) (Settings, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.settings, nil
		},
		Route: func(name string) (model.Route, error) {
			if strings.HasPrefix(name, "nope") {
				return model.Route{}, fmt.Errorf("resolve model %q: %w", name, model.ErrNoProvider)
			}
			return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
		},
		Provider: func(model.Route) (model.Provider, error) { return r.q, nil },
		Tools:    r.tools,
		OnCall: func(agent, thread string, req model.Request) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.seen[thread] = append(r.seen[thread], req)
		},
		LeaseTTL: 3 * time.Second,
	}
	for _, e := range edit {
		e(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	r.serve()
	t.Cleanup(r.close)
	return r
}

func testDrivers(p store.Paths) (map[string]store.Conversations, error) {
	return map[string]store.Conversations{store.Log: log.Open(p.Chats()), store.Compact: compact.Open(p.Chats())}, nil
}

// serve starts the endpoint in front of the harness.
func (r *rig) serve() {
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: testAgent, Key: r.key}},
		Own:     testAgent,
		Handler: endpoint.AgentHandler{Agent: r.h},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	ln, err := endpoint.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	r.srv = srv
	r.url = "http://" + ln.Addr().String() + contract.ACPPath
}

func (r *rig) close() {
	r.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.h.Shutdown(ctx)
}

func (r *rig) setSettings(edit func(*Settings)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	edit(&r.settings)
}

// requests are the model's requests in thread's conversation.
func (r *rig) requests(thread string) []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Request(nil), r.seen[thread]...)
}

// note is one notification the client got.
type note struct {
	Method string
	Update acp.Update
}

// exchange is one message's connection as the bridge opens it.
type exchange struct {
	c     *acp.Client
	conn  *endpoint.ClientConn
	mu    sync.Mutex
	notes []note
	// commands are the session's available_commands_update, each as it
	// came: the session's, not a prompt's, so not among notes.
	commands []json.RawMessage
	taken    chan struct{}
	once     sync.Once
}

func (r *rig) dial(ctx context.Context, thread string) *exchange {
	r.t.Helper()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.url, Key: r.key, Agent: testAgent})
	if err != nil {
		r.t.Fatal(err)
	}
	x := &exchange{conn: conn, taken: make(chan struct{})}
	x.c = acp.NewClient(context.Background(), conn, func(method string, params json.RawMessage) {
		n := note{Method: method}
		if method == acp.MethodSessionUpdate {
			var p struct {
				Update acp.Update `json:"update"`
			}
			json.Unmarshal(params, &p)
			n.Update = p.Update
			if p.Update.SessionUpdate == acp.UpdateAvailableCommands {
				x.mu.Lock()
				x.commands = append(x.commands, params)
				x.mu.Unlock()
				return
			}
		}
		x.mu.Lock()
		x.notes = append(x.notes, n)
		x.mu.Unlock()
		if method == contract.MethodTaken {
			x.once.Do(func() { close(x.taken) })
		}
	})
	if _, err := x.c.Initialize(ctx); err != nil {
		r.t.Fatal(err)
	}
	if err := x.c.Resume(ctx, thread); err != nil {
		r.t.Fatal(err)
	}
	return x
}

func (x *exchange) Notes() []note {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]note(nil), x.notes...)
}

// text is the answer chunks' text joined.
func (x *exchange) text() string {
	var b strings.Builder
	for _, n := range x.Notes() {
		if n.Update.SessionUpdate == acp.UpdateMessageChunk && n.Update.Content != nil {
			b.WriteString(n.Update.Content.Text)
		}
	}
	return b.String()
}

// say sends one message on a connection of its own and waits for its
// answer.
func (r *rig) say(thread, text string, meta json.RawMessage, blocks ...acp.Block) (acp.PromptResult, *exchange, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.t.Context(), 20*time.Second)
	defer cancel()
	x := r.dial(ctx, thread)
	defer x.c.Close()
	blocks = append([]acp.Block{{Type: "text", Text: text}}, blocks...)
	res, err := x.c.Prompt(ctx, thread, blocks, meta)
	return res, x, err
}

// events reads thread's events.
func (r *rig) events(thread string) []store.Event {
	r.t.Helper()
	p, _ := store.For(r.home, testAgent)
	drivers, _ := testDrivers(p)
	router, err := store.NewRouter(p, store.Log, drivers)
	if err != nil {
		r.t.Fatal(err)
	}
	all, err := router.Read(r.t.Context(), thread, 1)
	if err != nil {
		r.t.Fatal(err)
	}
	return all
}

func (r *rig) folders() *store.Folders {
	p, _ := store.For(r.home, testAgent)
	return &store.Folders{Paths: p}
}

// answers is the agent's answers on their way, as another process sees
// them.
func (r *rig) answers() *delivery.Answers {
	p, _ := store.For(r.home, testAgent)
	return &delivery.Answers{Paths: p}
}

// eventually waits for cond, failing after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testTools are three tools: each call answered with its input, counted
// by its id so a test sees no call made twice.
type testTools struct {
	mu    sync.Mutex
	made  map[string]int
	names []string
	gate  chan struct{} // when not nil, each call waits for it
	// onCall, when not nil, is told of each call before it is answered.
	onCall func(model.ToolCall)
}

func newTestTools() *testTools {
	return &testTools{made: map[string]int{}, names: []string{"memory__search", "memory__write", "web__fetch"}}
}

func (tt *testTools) Offer(ctx context.Context, agent string, narrowed *[]string) ([]model.Tool, error) {
	var out []model.Tool
	for _, n := range tt.names {
		if contract.Allowed(narrowed, n) {
			out = append(out, model.Tool{Name: n, Description: "a test tool", Schema: `{"type":"object"}`})
		}
	}
	return out, nil
}

func (tt *testTools) Call(ctx context.Context, agent string, call model.ToolCall, meta CallMeta) (string, bool) {
	tt.mu.Lock()
	tt.made[call.ID]++
	gate, onCall := tt.gate, tt.onCall
	tt.mu.Unlock()
	if onCall != nil {
		onCall(call)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return "cancelled", true
		}
	}
	if call.Name == "web__fetch" {
		return strings.Repeat("x", 40<<10), false
	}
	return fmt.Sprintf("%s found %s in %s", call.Name, call.Input, meta.Thread), false
}

func (tt *testTools) EndTurn(context.Context, string) {}

func (tt *testTools) count(id string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.made[id]
}

func (tt *testTools) total() int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	n := 0
	for _, c := range tt.made {
		n += c
	}
	return n
}

func isKind(k store.Kind) func(store.Event) bool {
	return func(e store.Event) bool { return e.Kind == k }
}

func count(events []store.Event, f func(store.Event) bool) int {
	n := 0
	for _, e := range events {
		if f(e) {
			n++
		}
	}
	return n
}

var errTest = errors.New("test")

// timers is a test's Config.AfterFunc: each timer is kept, to be fired by
// the test, never by time passing.
type timers struct {
	mu  sync.Mutex
	all []*timer
}

type timer struct {
	d     time.Duration
	f     func()
	ended bool // fired or stopped
}

func (c *timers) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &timer{d: d, f: f}
	c.all = append(c.all, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.ended
		tm.ended = true
		return was
	}
}

// fire runs, each once and in turn, the timers of d armed and not
// stopped, and says how many ran. Those they arm wait for the next fire.
func (c *timers) fire(d time.Duration) int {
	c.mu.Lock()
	var due []*timer
	for _, tm := range c.all {
		if !tm.ended && tm.d == d {
			tm.ended = true
			due = append(due, tm)
		}
	}
	c.mu.Unlock()
	for _, tm := range due {
		tm.f()
	}
	return len(due)
}
