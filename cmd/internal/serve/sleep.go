package serve

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/mcptools"
)

// served is one agent as its Server serves it: awake, with a harness
// (and the tools made for it), or asleep, holding neither, its port
// still served.
type served struct {
	name, id string
	cfg      Config
	srv      *endpoint.Server
	url      string
	done     chan struct{}   // closed once srv stopped serving
	slept    func(woke bool) // tells the Server it fell asleep, or woke

	mu     sync.Mutex
	h      *harness.Harness // nil while asleep
	tools  *mcptools.Tools  // the tools made for h, closed with it
	conns  int              // connections being served
	timer  *time.Timer      // puts it to sleep once idle
	asleep bool
	closed bool
}

// errClosed: the agent's server is closing.
var errClosed = errors.New("the agent's server is closing")

// wake makes the agent's harness. Called with mu held, or before any
// connection.
func (a *served) wake() error {
	h, t, err := newHarness(a.cfg)
	if err != nil {
		return err
	}
	a.h, a.tools = h, t
	return nil
}

// start begins finishing what a crash left, and the wait for sleep.
func (a *served) start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.h.Start(a.name)
	a.idle()
}

// idle arms the sleep timer, when the agent sleeps at all. mu is held.
func (a *served) idle() {
	if a.cfg.SleepAfter <= 0 || a.closed {
		return
	}
	if a.timer == nil {
		a.timer = time.AfterFunc(a.cfg.SleepAfter, a.sleep)
		return
	}
	a.timer.Reset(a.cfg.SleepAfter)
}

// enter counts a connection in, waking the agent if it sleeps, and
// gives the harness to serve it.
func (a *served) enter() (*harness.Harness, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errClosed
	}
	if a.h == nil {
		if err := a.wake(); err != nil {
			return nil, err
		}
		a.h.Start(a.name)
		a.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "agent woke", slog.String("agent", a.name))
		if a.asleep {
			a.asleep = false
			a.slept(true)
		}
	}
	a.conns++
	if a.timer != nil {
		a.timer.Stop()
	}
	return a.h, nil
}

// leave counts a connection out; the last out arms the sleep timer.
func (a *served) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conns--; a.conns == 0 {
		a.idle()
	}
}

// sleep closes the agent's harness and tools if it is still idle: its
// turns still running (callers gone) are waited for, its stores and tool
// sessions closed, its caches let go.
func (a *served) sleep() {
	a.mu.Lock()
	if a.conns > 0 || a.h == nil || a.closed {
		a.mu.Unlock()
		return
	}
	h, t := a.h, a.tools
	a.h, a.tools = nil, nil
	a.mu.Unlock()
	err := errors.Join(h.Close(), closeTools(t))
	attrs := []slog.Attr{slog.String("agent", a.name)}
	if err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	a.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "agent asleep", attrs...)
	// Asleep once all is closed, unless a connection woke it meanwhile.
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.h == nil && !a.closed {
		a.asleep = true
		a.slept(false)
	}
}

// close closes the agent for good: its harness and tools, if awake.
func (a *served) close() error {
	a.mu.Lock()
	a.closed = true
	if a.timer != nil {
		a.timer.Stop()
	}
	h, t := a.h, a.tools
	a.h, a.tools = nil, nil
	a.mu.Unlock()
	if h == nil {
		return nil
	}
	return errors.Join(h.Close(), closeTools(t))
}

// ServeACP serves one connection routed to the agent, awake.
func (a *served) ServeACP(ctx context.Context, req endpoint.Request, f acp.Framer) {
	h, err := a.enter()
	if err != nil {
		a.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "connection not served", slog.String("agent", a.name), slog.String("err", err.Error()))
		return
	}
	defer a.leave()
	endpoint.AgentHandler{Agent: h, Logger: a.cfg.Logger}.ServeACP(ctx, req, f)
}

// Health is the agent's harness's, when awake; asleep, it is well.
func (a *served) Health(ctx context.Context) error {
	a.mu.Lock()
	h := a.h
	a.mu.Unlock()
	if h == nil {
		return nil
	}
	return endpoint.AgentHandler{Agent: h}.Health(ctx)
}

// slept counts an agent asleep (woke false) or awake again; the first
// time every agent is asleep at once, AllAsleep is closed.
func (s *Server) slept(woke bool) {
	s.amu.Lock()
	defer s.amu.Unlock()
	if woke {
		s.asleep--
		return
	}
	if s.asleep++; s.asleep == len(s.agents) {
		select {
		case <-s.allAsleep:
		default:
			close(s.allAsleep)
		}
	}
}

// AllAsleep is closed the first time every agent is asleep at once:
// lnk-link-harness then ends, and the next message starts it again.
func (s *Server) AllAsleep() <-chan struct{} { return s.allAsleep }

// Asleep says whether agent sleeps now.
func (s *Server) Asleep(agent string) bool {
	for _, a := range s.agents {
		if a.name == agent {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.asleep
		}
	}
	return false
}
