package harnesstest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

// Agent is the name of the agent a Rig serves.
const Agent = "main"

// Key is the key a Rig's endpoint takes for Agent.
var Key = []byte("test-key-0123456789")

// Rig is a Harness on a test's temporary home, served on a real endpoint
// on 127.0.0.1:0; its model is Model, a scripted queue, and its tools
// Tools. Close (run by the test's cleanup) stops both.
type Rig struct {
	T       testing.TB
	Home    string
	Harness *harness.Harness
	Model   *scripted.Scripted
	Tools   *Tools
	Server  *endpoint.Server
	// URL is the endpoint's ACP address.
	URL string
	Key []byte

	mu       sync.Mutex
	settings harness.Settings
	seen     map[string][]model.Request // by thread
	gate     chan struct{}              // the next model call waits for it
	reached  chan struct{}              // closed when a call reaches the gate
	gateAt   int                        // the call the gate holds
	calls    int                        // model calls so far
}

// Drivers opens a home's two file drivers, log and compact, the log
// making folders ahead as Link Harness's does (log.MakeAhead): a
// harness.Config's Drivers.
func Drivers(p store.Paths) (map[string]store.Conversations, error) {
	return map[string]store.Conversations{log.Name: log.Open(p.Chats()).MakeAhead(transcript.File), compact.Name: compact.Open(p.Chats())}, nil
}

// Route gives every model's name the scripted provider, except a name
// beginning "nope", which no provider serves (model.ErrNoProvider).
func Route(name string) (model.Route, error) {
	if strings.HasPrefix(name, "nope") {
		return model.Route{}, fmt.Errorf("resolve model %q: %w", name, model.ErrNoProvider)
	}
	return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
}

// Config is a harness.Config at home whose every model call is p's:
// Drivers, Route, the settings set (read afresh at each turn), a lease
// of 3 s. Tools are none.
func Config(home string, p model.Provider, set harness.Settings) harness.Config {
	return harness.Config{
		Home:     home,
		Drivers:  Drivers,
		Settings: func(context.Context, store.Paths) (harness.Settings, error) { return set, nil },
		Route:    Route,
		Provider: func(model.Route) (model.Provider, error) { return p, nil },
		LeaseTTL: 3 * time.Second,
	}
}

// New starts a Rig on t's temporary home; edit changes its config before
// the harness is made (an edit of Home puts the rig there: a second
// harness on a first's store, as another process would be). Its settings are model "offline", and the alias
// fast for anthropic/claude-test (SetSettings changes them).
func New(t testing.TB, edit ...func(*harness.Config)) *Rig {
	t.Helper()
	r := &Rig{T: t, Home: t.TempDir(), Model: scripted.New(), Tools: NewTools(), Key: Key, seen: map[string][]model.Request{}}
	r.Model.Before = r.before
	r.settings = harness.Settings{Model: "offline", Aliases: map[string]string{"fast": "anthropic/claude-test"}}
	cfg := Config(r.Home, r.Model, harness.Settings{})
	cfg.Settings = func(context.Context, store.Paths) (harness.Settings, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.settings, nil
	}
	cfg.Tools = r.Tools
	cfg.OnCall = func(agent, thread string, req model.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen[thread] = append(r.seen[thread], req)
	}
	for _, e := range edit {
		e(&cfg)
	}
	r.Home = cfg.Home
	h, err := harness.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Harness = h
	r.serve()
	t.Cleanup(r.Close)
	return r
}

// serve starts the endpoint in front of the harness.
func (r *Rig) serve() {
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: Agent, Key: r.Key}},
		Own:     Agent,
		Handler: endpoint.AgentHandler{Agent: r.Harness},
	})
	if err != nil {
		r.T.Fatal(err)
	}
	ln, err := endpoint.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		r.T.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	r.Server = srv
	r.URL = "http://" + ln.Addr().String() + contract.ACPPath
}

// Close stops the endpoint and shuts the harness down, cancelling what
// still runs after 10 s. The test's cleanup calls it.
func (r *Rig) Close() {
	r.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Harness.Shutdown(ctx)
}

// SetSettings changes the settings the next turn reads.
func (r *Rig) SetSettings(edit func(*harness.Settings)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	edit(&r.settings)
}

// Requests are the model's requests in thread's conversation, in order.
func (r *Rig) Requests(thread string) []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Request(nil), r.seen[thread]...)
}

// HoldNext makes the next model call wait until the returned release is
// called; reached is closed once the call waits.
func (r *Rig) HoldNext() (reached <-chan struct{}, release func()) {
	r.mu.Lock()
	n := r.calls + 1
	r.mu.Unlock()
	return r.HoldCall(n)
}

// HoldCall makes the model's nth call (counting from 1, over every
// thread) wait until release is called; reached is closed once it waits.
func (r *Rig) HoldCall(n int) (reached <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, at := make(chan struct{}), make(chan struct{})
	r.gate, r.reached, r.gateAt = g, at, n
	var once sync.Once
	return at, func() { once.Do(func() { close(g) }) }
}

// before is the scripted model's Before: it counts calls and holds the
// one a HoldCall names.
func (r *Rig) before(ctx context.Context, req model.Request) error {
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
