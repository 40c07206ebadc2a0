package endpoint

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lnk-dev/link/acp"
)

// Defaults of Config's bounds in time.
const (
	DefaultReadTimeout = 10 * time.Second
	DefaultPing        = 30 * time.Second
)

// DefaultMaxPromptBytes bounds an agent's prompts in flight: two of the
// largest message a connection reads (acp.MaxMessage).
const DefaultMaxPromptBytes = 2 * acp.MaxMessage

// Config is what an endpoint serves.
type Config struct {
	// Agents are the agents it answers for.
	Agents []Agent
	// Own is the process's own agent (LNK_AGENT), the one a connection
	// naming none is routed to; empty is contract.DefaultAgent.
	Own string
	// Handler serves each upgraded connection and says the endpoint's
	// health.
	Handler Handler
	// Logger gets a line for each refusal and each connection's end;
	// nil logs nothing. Keys are never logged.
	Logger *slog.Logger
	// ReadLimit bounds one message read; 0 is acp.MaxMessage.
	ReadLimit int64
	// MaxPromptBytes bounds the bytes of prompts each agent has in
	// flight at once, over all its connections (acp.Budget); past it a
	// prompt is refused with a JSON-RPC error. 0 is
	// DefaultMaxPromptBytes.
	MaxPromptBytes int64
	// MaxUnkeyed bounds the connections held at once that haven't given
	// a key; past it the oldest is closed. 0 is DefaultMaxUnkeyed.
	MaxUnkeyed int
	// ReadTimeout bounds the read of a request, headers and body, and
	// the wait for the upgrade after the proof. 0 is DefaultReadTimeout.
	ReadTimeout time.Duration
	// Ping is how often an upgraded connection is pinged; one whose pong
	// doesn't come within Ping is closed. A client waiting on a long turn
	// still answers pings, so only a dead or silent one is closed. 0 is
	// DefaultPing.
	Ping time.Duration
	// LogEvery is the interval of refusals logged together: the first of
	// each as it came, then a count of the rest. 0 is DefaultLogEvery.
	LogEvery time.Duration
	// NoDelayOff leaves TCP_NODELAY off on accepted connections. It
	// exists only for the conformance kit's broken-endpoint tests and the
	// benchmark's off case: with it, a streamed answer waits ~40 ms on
	// the delayed ACK.
	NoDelayOff bool
}

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	if err := validateAgents(c.Agents); err != nil {
		return err
	}
	if c.Handler == nil {
		return errors.New("endpoint config: no handler")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ReadLimit <= 0 {
		c.ReadLimit = acp.MaxMessage
	}
	if c.MaxPromptBytes <= 0 {
		c.MaxPromptBytes = DefaultMaxPromptBytes
	}
	if c.MaxUnkeyed <= 0 {
		c.MaxUnkeyed = DefaultMaxUnkeyed
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.Ping <= 0 {
		c.Ping = DefaultPing
	}
	if c.LogEvery <= 0 {
		c.LogEvery = DefaultLogEvery
	}
	return nil
}

// Request is what the endpoint learnt of a connection before upgrading
// it: the agent it was routed to and its Link-Tools header.
type Request struct {
	Agent      string    // the routed agent's name
	AgentID    string    // its ID, "" if it has none
	Tools      *[]string // the Link-Tools header's names; nil when absent
	RemoteAddr string    // the client's address
	// Budget bounds the routed agent's prompts in flight, shared by its
	// connections.
	Budget *acp.Budget
}

// Handler serves an endpoint's connections.
type Handler interface {
	// ServeACP serves one upgraded connection, returning when it has
	// ended. The endpoint closes f afterwards. ctx is cancelled when the
	// endpoint's Serve context is.
	ServeACP(ctx context.Context, req Request, f acp.Framer)
	// Health is nil when the endpoint can take messages, else why not.
	Health(ctx context.Context) error
}

// HealthChecker is what an acp.Agent served by AgentHandler may also
// implement, for /health.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// AgentHandler is a Handler serving an acp.Agent: each connection is
// acp.Serve. Its health is the agent's, when the agent is a
// HealthChecker, else always good.
type AgentHandler struct {
	Agent  acp.Agent
	Logger *slog.Logger // nil logs nothing
}

var _ Handler = AgentHandler{}

// ServeACP runs acp.Serve for the routed agent, its prompts in flight
// bounded by req.Budget.
func (h AgentHandler) ServeACP(ctx context.Context, req Request, f acp.Framer) {
	err := acp.ServeBounded(ctx, f, req.Agent, req.Tools, h.Agent, req.Budget)
	if err != nil && h.Logger != nil {
		h.Logger.LogAttrs(ctx, slog.LevelDebug, "acp connection ended", slog.String("agent", req.Agent), slog.String("remote", req.RemoteAddr), slog.String("err", err.Error()))
	}
}

// Health is the agent's health, when it says one.
func (h AgentHandler) Health(ctx context.Context) error {
	if hc, ok := h.Agent.(HealthChecker); ok {
		return hc.Health(ctx)
	}
	return nil
}
