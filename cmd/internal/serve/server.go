package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/mcptools"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// Config is one agent's Link Harness, served at its endpoint on this
// machine's loopback. Home and Key are needed.
type Config struct {
	// Home is the Link home; the agent's files are store.For(Home, Agent).
	Home string
	// Agent is the agent it answers; "" is contract.DefaultAgent.
	Agent string
	// AgentID is the agent's ID, which a connection's Link-Agent-Id must
	// be when it says one (contract.CheckAgentID); "" is none.
	AgentID string
	// Key is the endpoint key.
	Key []byte
	// Addr is where it listens; "" is 127.0.0.1:0, a free port.
	Addr string
	// Model, when not "", is the agent's model over its config.json's.
	Model string
	// Env holds the providers' keys and addresses.
	Env map[string]string
	// Tools reaches the agent's tools; nil is the MCP servers Env names
	// ($LNK_MEMORY, $LNK_TOOL_<NAME>...), through harness/mcptools, closed
	// with the server.
	Tools harness.Tools
	// Logger gets what goes wrong outside a turn's answer; nil logs
	// nothing.
	Logger *slog.Logger
	// LeaseTTL is how long a turn's lease lasts unrenewed, so how soon
	// another process takes over a turn whose process died; 0 is
	// $LNK_LEASE_TTL of Env (a Go duration), else the harness's 30 s.
	LeaseTTL time.Duration
	// Edit, when not nil, changes the harness's config before it is made:
	// for tests and measures (a model that answers at once).
	Edit func(*harness.Config)
	// Settings, when not nil, are the agent's settings, kept in memory
	// (a blank unit's, given at its binding): config.json isn't read.
	Settings *harness.Settings
	// Bridges are store drivers reached through a store bridge already
	// running, by name (drivers.Set.Bridges).
	Bridges map[string]bridge.Config
	// StoreChild starts each other driver's plugin as this process's own
	// child, passed only its driver's variables of Env (drivers.PluginEnv):
	// a convenience (serve --store-child). Without it, the spec's way, each
	// is reached through the agent's store bridge Link runs beside it
	// (drivers.BridgeSocket), so nothing the driver needs is in Env.
	StoreChild bool
	// SleepAfter, when positive, is how long the agent goes without a
	// connection before it sleeps: its harness and the tools made for it
	// are closed (no tool session, no cache), its port still served, and
	// the next connection wakes it (docs/agents.md); 0 never sleeps.
	SleepAfter time.Duration
}

// EnvLeaseTTL names the environment's lease time (Config.LeaseTTL).
const EnvLeaseTTL = "LNK_LEASE_TTL"

// Server is Link Harness answering at its endpoints: one agent's, or
// several agents' of one owner in one process (StartAll), each on its own
// port with a harness, tools and home of its own.
type Server struct {
	agents []*served

	served chan struct{} // closed once an endpoint stopped serving
	sonce  sync.Once
	serrs  []error // each endpoint's Serve's end, by agent

	once sync.Once
	cerr error

	amu       sync.Mutex
	asleep    int           // agents asleep now
	allAsleep chan struct{} // closed the first time every agent is asleep at once
}

// Start makes the harness, listens, serves its endpoint and begins
// finishing what a crash left. The endpoint serves until Close.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	return StartAll(ctx, []Config{cfg})
}

// StartAll serves the agents of cfgs in this process, each from its own
// home, with its own harness, tools, drivers and key, on its own port as
// itself: a connection naming no agent is the port's own agent's. Any
// port answers a connection naming another of the agents, with that
// agent's key alone, as that agent (the contract's shared endpoint).
func StartAll(ctx context.Context, cfgs []Config) (*Server, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("serve: no agents")
	}
	s := &Server{served: make(chan struct{}), allAsleep: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		s.closeHarnesses()
		return nil, err
	}
	routes := make([]endpoint.Agent, 0, len(cfgs))
	handlers := make(map[agentKey]*served, len(cfgs))
	for i := range cfgs {
		a, err := newServed(cfgs[i], s.slept)
		if err != nil {
			return fail(err)
		}
		s.agents = append(s.agents, a)
		routes = append(routes, endpoint.Agent{Name: a.name, ID: a.id, Key: cfgs[i].Key})
		handlers[agentKey{a.name, a.id}] = a
	}
	lns := make([]net.Listener, 0, len(cfgs))
	closeLns := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for i, a := range s.agents {
		cfg := cfgs[i]
		srv, err := endpoint.New(endpoint.Config{
			Agents:  routes,
			Own:     a.name,
			Handler: dispatch{own: handlers[agentKey{a.name, a.id}], all: handlers},
			Logger:  cfg.Logger,
		})
		if err != nil {
			closeLns()
			return fail(err)
		}
		ln, err := endpoint.Listen(ctx, cfg.Addr)
		if err != nil {
			closeLns()
			return fail(fmt.Errorf("listen for %s: %w", a.name, err))
		}
		lns = append(lns, ln)
		a.srv, a.url = srv, contract.EndpointURL(ln.Addr().(*net.TCPAddr).Port)
	}
	s.serrs = make([]error, len(s.agents))
	for i, a := range s.agents {
		a.done = make(chan struct{})
		go func() {
			defer close(a.done)
			s.serrs[i] = a.srv.Serve(context.WithoutCancel(ctx), lns[i])
			s.sonce.Do(func() { close(s.served) })
		}()
	}
	for _, a := range s.agents {
		a.start()
	}
	return s, nil
}

// newServed makes one agent's harness (and its tools, when cfg names
// none), filling cfg's defaults; slept is told each time it sleeps.
func newServed(cfg Config, slept func(woke bool)) (*served, error) {
	if cfg.Agent == "" {
		cfg.Agent = contract.DefaultAgent
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := checkKeyLen(cfg.Key); err != nil {
		return nil, fmt.Errorf("endpoint key: %w", err)
	}
	if err := checkHome(cfg.Home); err != nil {
		return nil, err
	}
	if cfg.LeaseTTL == 0 && cfg.Env[EnvLeaseTTL] != "" {
		d, err := time.ParseDuration(cfg.Env[EnvLeaseTTL])
		if err != nil || d < 0 {
			return nil, fmt.Errorf("$%s %q: a duration such as 30s", EnvLeaseTTL, cfg.Env[EnvLeaseTTL])
		}
		cfg.LeaseTTL = d
	}
	a := &served{name: cfg.Agent, id: cfg.AgentID, cfg: cfg, slept: slept}
	if err := a.wake(); err != nil {
		return nil, err
	}
	return a, nil
}

// newHarness makes the agent's harness, and its tools when cfg names
// none (returned to be closed with it).
func newHarness(cfg Config) (*harness.Harness, *mcptools.Tools, error) {
	var own *mcptools.Tools
	if cfg.Tools == nil {
		t, err := mcptools.ForHome(cfg.Home, cfg.Env, cfg.Logger)
		if err != nil {
			return nil, nil, err
		}
		own, cfg.Tools = t, t
	}
	pr := NewProviders(cfg.Env)
	modelName := cfg.Model
	// The log and compact run here; every other driver in its plugin,
	// behind the store bridge, proved with the agent's key: one given
	// (Bridges), else the agent's beside it, else (StoreChild) a child.
	ds := drivers.Set{Key: cfg.Key, Env: cfg.Env, Logger: cfg.Logger, Bridges: cfg.Bridges, Beside: !cfg.StoreChild, Ahead: true}
	settings := func(ctx context.Context, p store.Paths) (harness.Settings, error) {
		return ReadSettings(ctx, p, modelName)
	}
	if cfg.Settings != nil {
		kept := *cfg.Settings
		settings = func(context.Context, store.Paths) (harness.Settings, error) { return kept, nil }
	}
	hc := harness.Config{
		Home:     cfg.Home,
		Drivers:  ds.Open,
		Openers:  ds.Openers,
		Settings: settings,
		Route:    pr.Route,
		Serves:   pr.Serves,
		Provider: pr.Provider,
		Facts:    modelFacts(cfg.Env, cfg.Logger),
		Tools:    cfg.Tools,
		Env:      cfg.Env,
		Logger:   cfg.Logger,
		LeaseTTL: cfg.LeaseTTL,
	}
	if cfg.Edit != nil {
		cfg.Edit(&hc)
	}
	h, err := harness.New(hc)
	if err != nil {
		closeTools(own)
		return nil, nil, err
	}
	return h, own, nil
}

// agentKey is an agent as the endpoint routes it: its name and ID.
type agentKey struct{ name, id string }

// dispatch is one port's handler: each connection goes to the harness of
// the agent the endpoint routed it to (having checked that agent's key),
// and its health is the port's own agent's.
type dispatch struct {
	own *served
	all map[agentKey]*served
}

// ServeACP serves the connection by the routed agent's harness alone.
func (d dispatch) ServeACP(ctx context.Context, req endpoint.Request, f acp.Framer) {
	a, ok := d.all[agentKey{req.Agent, req.AgentID}]
	if !ok {
		return // the endpoint routes only to the agents it was given
	}
	a.ServeACP(ctx, req, f)
}

// Health is the port's own agent's.
func (d dispatch) Health(ctx context.Context) error { return d.own.Health(ctx) }

// URL is the (first) agent's endpoint address: http://127.0.0.1:<port>/acp.
func (s *Server) URL() string { return s.agents[0].url }

// URLOf is agent's endpoint address, "" for an agent not served.
func (s *Server) URLOf(agent string) string {
	for _, a := range s.agents {
		if a.name == agent {
			return a.url
		}
	}
	return ""
}

// Harness is the (first) agent's harness, nil while it sleeps.
func (s *Server) Harness() *harness.Harness {
	a := s.agents[0]
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.h
}

// Served is closed if an endpoint stops serving before Close.
func (s *Server) Served() <-chan struct{} { return s.served }

// Close stops taking connections on every port, answers those open until
// their clients close them, then lets the turns still running (their
// callers gone) end, and closes the stores and tools.
func (s *Server) Close() error { return s.CloseThen(nil) }

// CloseThen is Close, calling unlistened, when not nil, once no port
// listens (a next process may listen on them) and before the connections
// open are answered to their end.
func (s *Server) CloseThen(unlistened func()) error {
	s.once.Do(func() {
		errs := make([]error, len(s.agents))
		var closed, stopped sync.WaitGroup
		for i, a := range s.agents {
			closed.Add(1)
			stopped.Add(1)
			go func() {
				defer closed.Done()
				errs[i] = a.srv.Close()
			}()
			go func() {
				defer stopped.Done()
				<-a.done // Serve returns once its listener is closed
			}()
		}
		stopped.Wait()
		if unlistened != nil {
			unlistened()
		}
		closed.Wait()
		for _, err := range s.serrs {
			if !errors.Is(err, endpoint.ErrClosed) { // closed before its Serve began: this Close's doing
				errs = append(errs, err)
			}
		}
		s.cerr = errors.Join(append(errs, s.closeHarnesses())...)
	})
	return s.cerr
}

// closeHarnesses closes each agent's harness and the tools made for it,
// at once.
func (s *Server) closeHarnesses() error {
	errs := make([]error, len(s.agents))
	var wg sync.WaitGroup
	for i, a := range s.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeTools closes the tools Start made, if it made them.
func closeTools(t *mcptools.Tools) error {
	if t == nil {
		return nil
	}
	return t.Close()
}
