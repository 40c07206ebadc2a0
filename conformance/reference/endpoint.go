// Package reference is the conformance kit's reference endpoint: the
// endpoint package's server and acp.Serve driving a scripted agent, in
// process on loopback. lnk conformance --reference and the kit's own tests
// run the kit against it; its Faults break one rule each, so those tests
// prove each check fails when its rule is broken.
package reference

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// Faults are rules the reference endpoint can be told to break, each for
// the kit's own tests of the check that must then fail.
type Faults struct {
	WrongProof    bool // Link-Proof one hex digit off
	Nagle         bool // TCP_NODELAY left off on accepted connections
	NoTaken       bool // _link/taken never sent
	AcceptBadFrom bool // a _meta.link from naming no sender let through
}

// Options say how to start a reference endpoint.
type Options struct {
	Addr   string // host:port to listen on; "127.0.0.1:0" when empty
	Faults Faults
	Logger *slog.Logger // nil logs nothing
}

// The agents the reference endpoint answers for: main (its own, with an
// ID), and two owners' agents both named shared.
const (
	MainAgent  = "main"
	MainID     = "owner-one.main"
	SharedName = "shared"
)

// Endpoint is a running reference endpoint.
type Endpoint struct {
	URL   string
	Key   []byte // main's key
	Agent *Agent

	srv    *endpoint.Server
	hs     *http.Server // serves a WrongProof endpoint instead of srv.Serve
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// Start starts a reference endpoint, serving until Close.
func Start(ctx context.Context, o Options) (*Endpoint, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	agent := NewAgent()
	key := newKey()
	srv, err := endpoint.New(endpoint.Config{
		Agents: []endpoint.Agent{
			{Name: MainAgent, ID: MainID, Key: key},
			{Name: SharedName, ID: "owner-one.shared", Key: newKey()},
			{Name: SharedName, ID: "owner-two.shared", Key: newKey()},
		},
		Own:        MainAgent,
		Handler:    handler{agent: agent, faults: o.Faults},
		Logger:     o.Logger,
		NoDelayOff: o.Faults.Nagle,
	})
	if err != nil {
		return nil, fmt.Errorf("start reference endpoint: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("start reference endpoint: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &Endpoint{
		URL:    "http://" + ln.Addr().String() + contract.ACPPath,
		Key:    key,
		Agent:  agent,
		srv:    srv,
		cancel: cancel,
		done:   make(chan error, 1),
	}
	if o.Faults.WrongProof {
		// The endpoint's handler behind one that spoils its proof.
		e.hs = &http.Server{Handler: wrongProof{srv}, BaseContext: func(net.Listener) context.Context { return sctx }}
		go func() { e.done <- e.hs.Serve(ln) }()
	} else {
		go func() { e.done <- srv.Serve(sctx, ln) }()
	}
	return e, nil
}

// Target is the endpoint as the kit sees it, every hook offered: the
// socket read in this process, the tool call, the recording model, two
// tools, and the answer left for recover.
func (e *Endpoint) Target() conformance.Target {
	return conformance.Target{
		URL:       e.URL,
		Key:       e.Key,
		Agent:     MainAgent,
		AgentID:   MainID,
		Nameless:  true,
		Shared:    SharedName,
		PID:       os.Getpid(),
		ToolCall:  &conformance.ToolCall{Prompt: ToolPrompt, Tool: CalledTool},
		Model:     e.Agent.Recorder(MainAgent),
		Tools:     Tools[:2],
		ModelName: ModelName,
		Recover:   &conformance.Recover{Prompt: RecoverPrompt},
	}
}

// Close stops the endpoint and ends its connections; a second Close
// says what the first did.
func (e *Endpoint) Close() error {
	e.once.Do(func() {
		e.cancel()
		if e.hs != nil {
			e.err = e.hs.Close()
		}
		if serr := <-e.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			e.err = errors.Join(e.err, serr)
		}
	})
	return e.err
}

func newKey() []byte {
	var b [24]byte
	rand.Read(b[:])
	return []byte(hex.EncodeToString(b[:]))
}

// handler serves each upgraded connection with acp.Serve and the
// reference agent, telling the agent when the connection has ended.
type handler struct {
	agent  *Agent
	faults Faults
}

func (h handler) ServeACP(ctx context.Context, req endpoint.Request, f acp.Framer) {
	g := &goneFramer{Framer: f, gone: make(chan struct{})}
	var fr acp.Framer = g
	if h.faults.NoTaken {
		fr = dropTaken{fr}
	}
	if h.faults.AcceptBadFrom {
		fr = acceptBadFrom{fr}
	}
	acp.Serve(ctx, fr, req.Agent, req.Tools, connAgent{a: h.agent, gone: g.gone})
}

func (h handler) Health(context.Context) error { return nil }

// goneFramer closes gone once its connection's reading has ended.
type goneFramer struct {
	acp.Framer
	gone chan struct{}
	once sync.Once
}

func (g *goneFramer) ReadMessage(ctx context.Context) ([]byte, error) {
	b, err := g.Framer.ReadMessage(ctx)
	if err != nil {
		g.once.Do(func() { close(g.gone) })
	}
	return b, err
}
