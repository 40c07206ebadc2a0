package endpoint

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// Server is an endpoint: it answers the proof, upgrades /acp for the
// routed agent's key, and answers /health.
type Server struct {
	cfg      Config
	unkeyed  *unkeyed
	refusals *refusals
	budgets  map[routed]*acp.Budget // each agent's prompts in flight

	mu      sync.Mutex
	closed  bool
	servers map[*http.Server]struct{}
	conns   sync.WaitGroup // upgraded connections being served
}

// ErrClosed is returned by Serve once the server has been closed.
var ErrClosed = errors.New("endpoint closed")

// New makes a server of cfg, checked.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	budgets := map[routed]*acp.Budget{}
	for _, a := range cfg.Agents {
		budgets[routed{a.Name, a.ID}] = acp.NewBudget(cfg.MaxPromptBytes)
	}
	return &Server{
		cfg:      cfg,
		unkeyed:  newUnkeyed(cfg.MaxUnkeyed),
		refusals: newRefusals(cfg.Logger, cfg.LogEvery),
		budgets:  budgets,
		servers:  map[*http.Server]struct{}{},
	}, nil
}

// routed is an agent as routing tells it: its name and ID.
type routed struct{ name, id string }

// Budget is the bound of an agent's prompts in flight.
func (s *Server) Budget(name, id string) *acp.Budget { return s.budgets[routed{name, id}] }

// ListenAndServe listens on addr (host:port) and serves it until ctx is
// done or Close.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := Listen(ctx, addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve answers the connections ln accepts, TCP_NODELAY on on each,
// until ctx is done (every connection is then ended, and the turns'
// contexts cancelled) or Close (the connections still open are let run
// to their end). It returns nil once stopped either way.
//
// Every read is bounded in time: a request's headers and body within
// ReadTimeout, the upgrade within ReadTimeout of the proof, and an
// upgraded connection by its pings. Connections without a key are held
// MaxUnkeyed at most, the oldest closed past it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: s.cfg.ReadTimeout,
		ReadTimeout:       s.cfg.ReadTimeout, // the upgrade clears it for the WebSocket
		IdleTimeout:       s.cfg.ReadTimeout, // a proved connection waits this long for its upgrade
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         s.unkeyed.connState,
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	s.servers[hs] = struct{}{}
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { hs.Close() })
	defer stop()
	err := hs.Serve(noDelayListener{Listener: ln, on: !s.cfg.NoDelayOff})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops listening, ends idle connections, and waits for the
// upgraded ones to end: their clients close them once answered.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	servers := s.servers
	s.servers = map[*http.Server]struct{}{}
	s.mu.Unlock()
	var errs []error
	for hs := range servers {
		if err := hs.Shutdown(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	s.conns.Wait()
	s.refusals.flush()
	return errors.Join(errs...)
}

// Unkeyed says how the endpoint has held connections without a key.
func (s *Server) Unkeyed() UnkeyedStats { return s.unkeyed.stats() }

// maxHeaderBytes bounds a request's headers: the endpoint's are a few
// hundred bytes.
const maxHeaderBytes = 64 << 10

// ServeHTTP answers the endpoint's paths: the proof, the upgrade and
// health. Served by anything but Serve, its connections go without
// TCP_NODELAY's guarantee.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		// Refused before it is read: its connection ends with the answer.
		w.Header().Set("Connection", "close")
		s.refuse(w, r, http.StatusBadRequest, "a request to the endpoint has no body")
		return
	}
	switch r.URL.Path {
	case contract.ProofPath:
		s.proof(w, r)
	case contract.ACPPath:
		s.upgrade(w, r)
	case contract.HealthPath:
		s.health(w, r)
	default:
		http.NotFound(w, r)
	}
}

// proof answers GET /_link/proof: the routed agent's proof of the
// challenge. The connection stays open for the upgrade.
func (s *Server) proof(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		s.refuse(w, r, http.StatusMethodNotAllowed, "the proof is a GET")
		return
	}
	challenge := r.Header.Get(contract.HeaderChallenge)
	if err := contract.CheckChallenge(challenge); err != nil {
		s.refuse(w, r, http.StatusBadRequest, contract.HeaderChallenge+": "+err.Error())
		return
	}
	a, ok := s.route(w, r)
	if !ok {
		return
	}
	w.Header().Set(contract.HeaderProof, contract.Proof(a.Key, challenge))
	w.WriteHeader(http.StatusOK)
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		s.unkeyed.provedTo(c) // its upgrade follows: evicted last
	}
}

// connKey keys a request's connection in its context (ConnContext).
type connKey struct{}

// upgrade answers /acp: the routed agent's key, the Link-Tools header,
// then the WebSocket, served by the Handler until it ends.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request) {
	a, ok := s.route(w, r)
	if !ok {
		return
	}
	if !contract.KeyMatches(a.Key, r.Header.Get(contract.HeaderAuthorization)) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		s.refusals.refused(r.Context(), http.StatusUnauthorized, r.URL.Path, "no key or a wrong one for "+a.Name, r.RemoteAddr)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var tools *[]string
	if vals := r.Header.Values(contract.HeaderTools); len(vals) > 0 {
		list, err := contract.ParseToolsHeader(strings.Join(vals, ","))
		if err != nil {
			s.refuse(w, r, http.StatusBadRequest, err.Error())
			return
		}
		tools = &list
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.refuse(w, r, http.StatusServiceUnavailable, "the endpoint is closing")
		return
	}
	s.conns.Add(1)
	s.mu.Unlock()
	defer s.conns.Done()
	// The request's read deadline would hold for the WebSocket too, but
	// the hijack Accept makes clears the connection's deadlines: the
	// upgraded connection is bounded by its pings instead
	// (TestUpgradedOutlivesReadTimeout).
	hw := &holdingWriter{ResponseWriter: w}
	c, err := websocket.Accept(hw, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept answered the request
	}
	f := acp.NewWebSocket(c, s.cfg.ReadLimit)
	if hw.conn != nil {
		f.SetHolder(hw.conn) // a response and what follows it at once in one write
	}
	ctx := r.Context()
	defer s.ping(ctx, c)()
	s.cfg.Handler.ServeACP(ctx, Request{Agent: a.Name, AgentID: a.ID, Tools: tools, RemoteAddr: r.RemoteAddr, Budget: s.budgets[routed{a.Name, a.ID}]}, f)
	if ctx.Err() != nil {
		f.CloseNow()
		return
	}
	f.Close()
}

// health answers /health: 200 when the Handler is healthy, else 503 with
// its reason.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Handler.Health(r.Context()); err != nil {
		s.refuse(w, r, http.StatusServiceUnavailable, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("ok\n"))
}

// route finds the request's agent, or answers 404 or 409.
func (s *Server) route(w http.ResponseWriter, r *http.Request) (Agent, bool) {
	a, err := Route(s.cfg.Agents, s.cfg.Own, r.Header.Get(contract.HeaderAgent), r.Header.Get(contract.HeaderAgentID))
	switch {
	case errors.Is(err, ErrAgentShared):
		s.refuse(w, r, http.StatusConflict, err.Error())
		return Agent{}, false
	case err != nil:
		s.refuse(w, r, http.StatusNotFound, err.Error())
		return Agent{}, false
	}
	return a, true
}

// ping pings c every Ping while it is open, and closes it when a pong
// doesn't come within Ping: the peer is gone or doesn't read. The
// function it returns stops the pings, waiting for one under way. The
// pings run on a timer, not a goroutine of the connection's own: most
// connections end, answered, before their first.
func (s *Server) ping(ctx context.Context, c *websocket.Conn) (stop func()) {
	p := &pinger{}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t = time.AfterFunc(s.cfg.Ping, func() {
		if !p.begin() {
			return
		}
		defer p.wg.Done()
		if ctx.Err() != nil {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, s.cfg.Ping)
		err := c.Ping(pctx)
		cancel()
		if err != nil {
			if !p.isStopped() { // else ended meanwhile: not the peer's silence
				s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "endpoint closed a connection that didn't answer a ping", slog.Duration("within", s.cfg.Ping), slog.String("err", err.Error()))
			}
			c.CloseNow()
			return
		}
		p.again(s.cfg.Ping)
	})
	return p.stop
}

// pinger is a connection's ping timer, stopped once.
type pinger struct {
	t       *time.Timer
	wg      sync.WaitGroup // a ping under way
	mu      sync.Mutex
	stopped bool
}

// begin says whether a ping may go (not stopped), counting it under way
// when it may.
func (p *pinger) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.wg.Add(1)
	return true
}

func (p *pinger) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// again sets the next ping, unless stopped.
func (p *pinger) again(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.t.Reset(d)
	}
}

// stop ends the pings and waits for one under way.
func (p *pinger) stop() {
	p.mu.Lock()
	p.stopped = true
	p.t.Stop()
	p.mu.Unlock()
	p.wg.Wait()
}

// refuse answers status with a line of why, and logs it at a bounded
// rate (refusals).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	s.refusals.refused(r.Context(), status, r.URL.Path, why, r.RemoteAddr)
	http.Error(w, why, status)
}
