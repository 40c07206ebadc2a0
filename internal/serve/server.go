package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/tools"
	"github.com/lnk-dev/link/store"
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
	// ($LNK_MEMORY, $LNK_TOOL_<NAME>...), through harness/tools, closed
	// with the server.
	Tools harness.Tools
	// Logger gets what goes wrong outside a turn's answer; nil logs
	// nothing.
	Logger *slog.Logger
	// LeaseTTL is how long a turn's lease lasts unrenewed, so how soon
	// another process takes over a turn whose process died; 0 is
	// $LNK_LEASE_TTL of Env (a Go duration), else the harness's 30 s.
	LeaseTTL time.Duration
	// Linked opens each store driver the program links, by name, run in
	// its process (lnk: sqlite); a conversation kept by another of lnk
	// store serve's drivers is reached through the store bridge, the
	// driver run in a child process (Ways).
	Linked map[string]store.Opener
	// Edit, when not nil, changes the harness's config before it is made:
	// for tests and measures (a model that answers at once).
	Edit func(*harness.Config)
}

// EnvLeaseTTL names the environment's lease time (Config.LeaseTTL).
const EnvLeaseTTL = "LNK_LEASE_TTL"

// Server is a harness answering at its endpoint.
type Server struct {
	h     *harness.Harness
	tools *tools.Tools // the tools Start made, closed with it
	srv   *endpoint.Server
	url   string

	served chan struct{} // closed once the endpoint stopped serving
	serr   error

	once sync.Once
	cerr error
}

// Start makes the harness, listens, serves its endpoint and begins
// finishing what a crash left. The endpoint serves until Close.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Agent == "" {
		cfg.Agent = contract.DefaultAgent
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LeaseTTL == 0 && cfg.Env[EnvLeaseTTL] != "" {
		d, err := time.ParseDuration(cfg.Env[EnvLeaseTTL])
		if err != nil || d < 0 {
			return nil, fmt.Errorf("$%s %q: a duration such as 30s", EnvLeaseTTL, cfg.Env[EnvLeaseTTL])
		}
		cfg.LeaseTTL = d
	}
	var own *tools.Tools
	if cfg.Tools == nil {
		env := cfg.Env
		home := cfg.Home
		t, err := tools.New(tools.Config{
			Env:    func(string) map[string]string { return env },
			Paths:  func(agent string) (store.Paths, error) { return store.For(home, agent) },
			Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		own, cfg.Tools = t, t
	}
	pr := NewProviders(cfg.Env)
	modelName := cfg.Model
	ways := Ways{Linked: cfg.Linked, Key: cfg.Key, Env: cfg.Env, Logger: cfg.Logger}
	hc := harness.Config{
		Home:    cfg.Home,
		Drivers: ways.Drivers,
		Openers: ways.Openers,
		Settings: func(ctx context.Context, p store.Paths) (harness.Settings, error) {
			return ReadSettings(ctx, p, modelName)
		},
		Route:    pr.Route,
		Serves:   pr.Serves,
		Provider: pr.Provider,
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
		return nil, err
	}
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: cfg.Agent, ID: cfg.AgentID, Key: cfg.Key}},
		Own:     cfg.Agent,
		Handler: endpoint.AgentHandler{Agent: h, Logger: cfg.Logger},
		Logger:  cfg.Logger,
	})
	if err != nil {
		h.Close()
		closeTools(own)
		return nil, err
	}
	ln, err := endpoint.Listen(ctx, cfg.Addr)
	if err != nil {
		h.Close()
		closeTools(own)
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{h: h, tools: own, srv: srv, url: contract.EndpointURL(ln.Addr().(*net.TCPAddr).Port), served: make(chan struct{})}
	go func() {
		defer close(s.served)
		s.serr = srv.Serve(context.WithoutCancel(ctx), ln)
	}()
	h.Start(cfg.Agent)
	return s, nil
}

// URL is the endpoint's address: http://127.0.0.1:<port>/acp.
func (s *Server) URL() string { return s.url }

// Harness is the harness served.
func (s *Server) Harness() *harness.Harness { return s.h }

// Served is closed if the endpoint stops serving before Close.
func (s *Server) Served() <-chan struct{} { return s.served }

// Close stops taking connections, answers those open, then lets the turns
// still running (their callers gone) end, and closes the store.
func (s *Server) Close() error {
	s.once.Do(func() {
		cerr := s.srv.Close()
		<-s.served
		herr := s.h.Close()
		s.cerr = errors.Join(s.serr, cerr, herr, closeTools(s.tools))
	})
	return s.cerr
}

// closeTools closes the tools Start made, if it made them.
func closeTools(t *tools.Tools) error {
	if t == nil {
		return nil
	}
	return t.Close()
}
