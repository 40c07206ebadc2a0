package mcptools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/internal/redact"
)

// protocolVersion is the MCP version a session asks for: the newest the
// go-sdk negotiates over a stateful session, so a session starts with
// initialize alone (no server/discover probe first).
const protocolVersion = "2025-11-25"

// session is one MCP session with a tool: kept between turns, a turn's
// own, or one that only lists (throwaway).
type session struct {
	tool    string
	addr    string
	cs      *mcp.ClientSession
	started time.Time
	kept    bool   // in the agent's kept pool, else a turn's
	thread  string // the turn's conversation, for one that isn't kept

	// Under the agent's lock:
	used    time.Time // when its last call ended, or it started
	busy    int       // calls in flight
	retired bool      // out of its pool: closed once no call is in flight
}

// opening is a session being started, which others wanting the same
// session wait for rather than start another.
type opening struct {
	done chan struct{}
	s    *session
	err  error
}

// errStart: a tool didn't start and list its calls in time.
var errStart = errors.New("it didn't start and list its calls in time")

// errClosed: the Tools was closed while a call or a start was under way.
var errClosed = errors.New("the harness is closing")

// bound is ctx ended also when t is closed (its cause errClosed), so a
// call or start under way never holds Close: a session's Close waits for
// its calls in flight, and a call whose server never answers would hold
// it for good. Its stop must be called.
func (t *Tools) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(t.life, func() { cancel(context.Cause(t.life)) })
	return ctx, func() {
		unhook()
		cancel(nil)
	}
}

// open starts a session with srv and lists its calls, both within
// StartTimeout. A tool that takes longer is given up on: its connection
// is closed, so the bridge starting it can end the start, and a session
// it started is ended.
func (t *Tools) open(ctx context.Context, srv server) (*session, listing, error) {
	bctx, unbind := t.bound(ctx)
	defer unbind()
	sctx, cancel := context.WithTimeout(bctx, t.cfg.StartTimeout)
	defer cancel()
	transport := &mcp.StreamableClientTransport{
		Endpoint:             srv.addr,
		HTTPClient:           t.cfg.HTTPClient,
		DisableStandaloneSSE: true, // the list is asked again at each start
		MaxRetries:           1,
	}
	cs, err := t.client.Connect(sctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, listing{}, t.startErr(ctx, sctx, srv, "start", err)
	}
	var listed []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		res, err := cs.ListTools(sctx, params)
		if err != nil {
			cs.Close()
			return nil, listing{}, t.startErr(ctx, sctx, srv, "list the calls of", err)
		}
		listed = append(listed, res.Tools...)
		if res.NextCursor == "" || page+1 >= maxPages {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	instructions := ""
	if r := cs.InitializeResult(); r != nil {
		instructions = r.Instructions
	}
	now := t.cfg.Now()
	s := &session{tool: srv.name, addr: srv.addr, cs: cs, started: now, used: now}
	return s, newListing(srv.name, srv.addr, instructions, listed), nil
}

// startErr says why srv didn't start: in time, or not at all, never
// with its address, which carries the proxy's secret.
func (t *Tools) startErr(ctx, sctx context.Context, srv server, op string, err error) error {
	if ctx.Err() == nil && errors.Is(context.Cause(sctx), errClosed) {
		return fmt.Errorf("%s %s: %w", op, srv.name, errClosed)
	}
	if ctx.Err() == nil && sctx.Err() != nil {
		return fmt.Errorf("%s %s: %w (%s)", op, srv.name, errStart, t.cfg.StartTimeout)
	}
	return fmt.Errorf("%s %s: %s", op, srv.name, redact.Address(err.Error(), srv.addr))
}

// close ends s's session: once its calls in flight are answered or
// stopped (every call's context ends with its Tools), bounded by its
// transport's own limit on the goodbye (a DELETE, 5 s).
func (s *session) close() {
	s.cs.Close()
}
