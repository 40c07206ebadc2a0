package endpoint

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lnk-dev/link/acp"
)

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
	return nil
}

// Request is what the endpoint learnt of a connection before upgrading
// it: the agent it was routed to and its Link-Tools header.
type Request struct {
	Agent      string    // the routed agent's name
	AgentID    string    // its ID, "" if it has none
	Tools      *[]string // the Link-Tools header's names; nil when absent
	RemoteAddr string    // the client's address
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

// ServeACP runs acp.Serve for the routed agent.
func (h AgentHandler) ServeACP(ctx context.Context, req Request, f acp.Framer) {
	err := acp.Serve(ctx, f, req.Agent, req.Tools, h.Agent)
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
