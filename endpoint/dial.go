package endpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/coder/websocket"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// DialOptions say how to open one message's connection to an endpoint.
type DialOptions struct {
	URL     string    // the endpoint: http://127.0.0.1:18800/acp (ws:// too)
	Key     []byte    // the endpoint key, sent only once the proof is right
	Agent   string    // Link-Agent; "" sends none (the endpoint's own agent)
	AgentID string    // Link-Agent-Id; "" sends none
	Tools   *[]string // Link-Tools; nil sends none
	// NoProof upgrades without asking the proof first: for an endpoint
	// without the contract's proof. The key then goes to whatever
	// answers on the port.
	NoProof bool
	// NoDelayOff leaves TCP_NODELAY off on the connection: only for the
	// benchmark's off case.
	NoDelayOff bool
	// ReadLimit bounds one message read; 0 is acp.MaxMessage.
	ReadLimit int64
}

// Steps of a dial, as a DialError names them.
const (
	StepConnect = "connect"
	StepProof   = "proof"
	StepUpgrade = "upgrade"
)

// ErrBadProof: the endpoint's Link-Proof is missing or wrong, so it isn't
// the harness (or has another key). Nothing more was sent to it.
var ErrBadProof = errors.New("the endpoint's proof is missing or wrong")

// ErrConnReused: the endpoint closed the proved connection before the
// upgrade; Dial never upgrades on another one.
var ErrConnReused = errors.New("the endpoint closed the proved connection before the upgrade")

// DialError says which step of a dial failed, and the endpoint's HTTP
// status when it answered one. Its Err is ErrUnknownAgent for 404,
// ErrAgentShared for 409, ErrUnauthorized for 401, ErrBadProof for a
// wrong proof, else the cause.
type DialError struct {
	Step   string // StepConnect, StepProof or StepUpgrade
	Status int    // the HTTP status answered, 0 if none
	Body   string // the start of the answer's body, for a refusal
	Err    error
}

// Error says the step, the status and why.
func (e *DialError) Error() string {
	var b strings.Builder
	b.WriteString("dial endpoint: ")
	b.WriteString(e.Step)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Body != "" {
		b.WriteString(" (")
		b.WriteString(e.Body)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap is the cause, or the sentinel of the status.
func (e *DialError) Unwrap() error { return e.Err }

// ClientConn is one message's connection to an endpoint, upgraded: an
// acp.Framer, with the TCP connection's addresses.
type ClientConn struct {
	*acp.WebSocket
	local, remote net.Addr
}

var _ acp.Framer = (*ClientConn)(nil)

// LocalAddr is the client side's address of the TCP connection.
func (c *ClientConn) LocalAddr() net.Addr { return c.local }

// RemoteAddr is the endpoint side's address of the TCP connection.
func (c *ClientConn) RemoteAddr() net.Addr { return c.remote }

// Dial opens one message's connection: a fresh TCP connection with
// TCP_NODELAY on, on Linux to a loopback endpoint whose socket belongs
// to this user (checkOwner; nothing is sent to another's), GET /_link/proof with a fresh challenge, the proof
// checked before the key is sent (a wrong or missing one closes the
// connection, nothing else sent), then the WebSocket upgrade on that same
// connection with the key and the agent's headers. A connection the
// endpoint closes before its proof's answer is opened again, up to
// proofTries in all (no key was sent on it). Its errors are *DialError.
func Dial(ctx context.Context, o DialOptions) (*ClientConn, error) {
	host, path, err := parseURL(o.URL)
	if err != nil {
		return nil, &DialError{Step: StepConnect, Err: err}
	}
	if len(o.Key) == 0 {
		return nil, &DialError{Step: StepConnect, Err: errors.New("no endpoint key")}
	}
	var raw net.Conn
	var br *bufio.Reader
	for try := 1; ; try++ {
		raw, br, err = connect(ctx, host, o)
		if err == nil {
			break
		}
		if try == proofTries || ctx.Err() != nil || !closedUnanswered(err) {
			return nil, err
		}
	}
	h := agentHeader(o)
	h.Set(contract.HeaderAuthorization, contract.BearerPrefix+string(o.Key))
	if o.Tools != nil {
		h.Set(contract.HeaderTools, strings.Join(*o.Tools, ","))
	}
	up := &upgrader{conn: raw, br: br}
	c, resp, err := websocket.Dial(ctx, "ws://"+host+path, &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: up, CheckRedirect: noRedirect},
		HTTPHeader:      h,
		CompressionMode: websocket.CompressionDisabled,
	})
	up.release()
	if err != nil {
		raw.Close()
		e := &DialError{Step: StepUpgrade, Err: err}
		if resp != nil {
			e.Status = resp.StatusCode
			e.Body = readBody(resp.Body)
			if s := statusErr(resp.StatusCode); s != nil {
				e.Err = s
			}
		}
		return nil, e
	}
	return &ClientConn{WebSocket: acp.NewWebSocket(c, o.ReadLimit), local: raw.LocalAddr(), remote: raw.RemoteAddr()}, nil
}

// proofTries is how many connections a dial opens at most while each is
// closed before its proof is answered: an endpoint under a stream of
// new connections closes the oldest silent ones to make room, and a
// client held back by a busy CPU between its connect and its proof's
// request is one. No key was sent on such a connection.
const proofTries = 3

// closedUnanswered says whether err is a proof's connection closed by
// the endpoint before its answer.
func closedUnanswered(err error) bool {
	var de *DialError
	return errors.As(err, &de) && de.Step == StepProof && de.Status == 0 &&
		(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET))
}

// connect opens a connection to host as Dial does, up to its proof
// checked (without NoProof), and returns it with the reader of its
// answers.
func connect(ctx context.Context, host string, o DialOptions) (net.Conn, *bufio.Reader, error) {
	d := net.Dialer{KeepAlive: -1} // one message's connection (Listen)
	raw, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, &DialError{Step: StepConnect, Err: err}
	}
	if err := checkOwner(raw); err != nil {
		raw.Close()
		return nil, nil, &DialError{Step: StepConnect, Err: err}
	}
	// TCP_NODELAY is on already: Go turns it on for every TCP connection
	// it dials. It is set only to turn it off.
	if tc, ok := raw.(*net.TCPConn); ok && o.NoDelayOff {
		if err := tc.SetNoDelay(false); err != nil {
			raw.Close()
			return nil, nil, &DialError{Step: StepConnect, Err: fmt.Errorf("set TCP_NODELAY: %w", err)}
		}
	}
	// The proof's and the upgrade's answers are read through br, bounded
	// in size together; the WebSocket then reads the connection itself.
	br := readers.Get().(*bufio.Reader)
	br.Reset(&io.LimitedReader{R: raw, N: maxAnswersBytes})
	if !o.NoProof {
		if err := prove(ctx, raw, br, host, o); err != nil {
			putReader(br)
			raw.Close()
			return nil, nil, err
		}
	}
	return raw, br, nil
}

// A dial's buffers, pooled: the reader of the proof's and the upgrade's
// answers, given back once the upgrade is answered (the WebSocket reads
// through a buffer of its own), and the buffer a request is written
// into, sent in one write.
var (
	readers  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
	requests = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// maxAnswersBytes bounds what a dial reads of the proof's and the
// upgrade's answers together: headers of a few hundred bytes, or a
// refusal's line.
const maxAnswersBytes = 64 << 10

// putReader gives br back to its pool, holding no connection.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// bounded bounds conn's reads and writes by ctx, its deadline and its
// end, until the function it returns is called.
func bounded(ctx context.Context, conn net.Conn) (release func()) {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(deadlinePast) })
	dl, ok := ctx.Deadline()
	if ok {
		conn.SetDeadline(dl)
	}
	return func() {
		stop()
		if ok {
			conn.SetDeadline(noDeadline)
		}
	}
}

// writeRequest sends req on conn in one write.
func writeRequest(conn net.Conn, req *http.Request) error {
	buf := requests.Get().(*bytes.Buffer)
	defer requests.Put(buf)
	buf.Reset()
	if err := req.Write(buf); err != nil { // a bytes.Buffer: req.Write adds no buffer of its own
		return err
	}
	_, err := conn.Write(buf.Bytes())
	return err
}

// prove asks the endpoint for its proof of a fresh challenge on conn,
// writing the request and reading the answer (through br) by hand, so
// nothing but the proof request is sent before the proof is checked,
// and the connection is known to be the one the upgrade then takes.
func prove(ctx context.Context, conn net.Conn, br *bufio.Reader, host string, o DialOptions) error {
	defer bounded(ctx, conn)()
	challenge := contract.NewChallenge()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+contract.ProofPath, nil)
	if err != nil {
		return &DialError{Step: StepProof, Err: err}
	}
	req.Header = agentHeader(o)
	req.Header.Set(contract.HeaderChallenge, challenge)
	if err := writeRequest(conn, req); err != nil {
		return &DialError{Step: StepProof, Err: ctxErr(ctx, err)}
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return &DialError{Step: StepProof, Err: ctxErr(ctx, err)}
	}
	if resp.StatusCode != http.StatusOK {
		e := &DialError{Step: StepProof, Status: resp.StatusCode, Body: readBody(resp.Body), Err: statusErr(resp.StatusCode)}
		if e.Err == nil {
			e.Err = errors.New("the endpoint refused the proof")
		}
		return e
	}
	// The proof's answer has no body: read past one up to readBody's
	// bound, kept nowhere (io.Discard's pooled buffer).
	io.Copy(io.Discard, io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if !contract.VerifyProof(o.Key, challenge, resp.Header.Get(contract.HeaderProof)) {
		return &DialError{Step: StepProof, Status: resp.StatusCode, Err: ErrBadProof}
	}
	if resp.Close || br.Buffered() > 0 {
		return &DialError{Step: StepProof, Status: resp.StatusCode, Err: ErrConnReused}
	}
	return nil
}

// upgrader is the http.RoundTripper that carries websocket.Dial's
// upgrade on the proved connection: it writes the request there and
// reads the answer through the proof's reader, once; it never dials,
// so the key goes nowhere but where the proof came from.
type upgrader struct {
	conn net.Conn
	br   *bufio.Reader // nil once given back
	used bool
}

// RoundTrip sends the upgrade request and reads its answer, bounded by
// the request's context. A 101's body is the connection itself, as
// websocket.Dial takes it.
func (u *upgrader) RoundTrip(req *http.Request) (*http.Response, error) {
	if u.used || u.br == nil {
		return nil, ErrConnReused
	}
	u.used = true
	ctx := req.Context()
	defer bounded(ctx, u.conn)()
	if err := writeRequest(u.conn, req); err != nil {
		return nil, ctxErr(ctx, err)
	}
	resp, err := http.ReadResponse(u.br, req)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body = u.upgraded()
		return resp, nil
	}
	// A refusal's body, read whole before the reader goes back: at most
	// what websocket.Dial reads of it.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// upgraded is the upgraded connection as the WebSocket reads it: the
// connection itself, after any bytes the reader holds past the answer
// (a peer's first frame sent with it).
func (u *upgrader) upgraded() io.ReadWriteCloser {
	if n := u.br.Buffered(); n > 0 {
		held, _ := u.br.Peek(n)
		return &readFirst{Reader: io.MultiReader(bytes.NewReader(bytes.Clone(held)), u.conn), Conn: u.conn}
	}
	return u.conn
}

// release gives the reader back to its pool.
func (u *upgrader) release() {
	if u.br != nil {
		putReader(u.br)
		u.br = nil
	}
}

// readFirst is a connection whose reads begin with bytes already read
// off it.
type readFirst struct {
	io.Reader
	net.Conn
}

func (r *readFirst) Read(p []byte) (int, error) { return r.Reader.Read(p) }

// agentHeader holds Link-Agent and Link-Agent-Id as o says them.
func agentHeader(o DialOptions) http.Header {
	h := http.Header{}
	if o.Agent != "" {
		h.Set(contract.HeaderAgent, o.Agent)
	}
	if o.AgentID != "" {
		h.Set(contract.HeaderAgentID, o.AgentID)
	}
	return h
}

// statusErr is the sentinel of a refusal's status, nil for another.
func statusErr(status int) error {
	switch status {
	case http.StatusNotFound:
		return ErrUnknownAgent
	case http.StatusConflict:
		return ErrAgentShared
	case http.StatusUnauthorized:
		return ErrUnauthorized
	}
	return nil
}

// parseURL reads an endpoint's URL: http or ws, a host and port, a path
// (contract.ACPPath when empty).
func parseURL(s string) (host, path string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("endpoint url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "ws" {
		return "", "", fmt.Errorf("endpoint url %q: the scheme is http or ws", s)
	}
	if u.Host == "" || u.Port() == "" {
		return "", "", fmt.Errorf("endpoint url %q: it names a host and port", s)
	}
	path = u.EscapedPath()
	if path == "" {
		path = contract.ACPPath
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return u.Host, path, nil
}

// readBody reads the start of a refusal's body, for its error.
func readBody(r io.ReadCloser) string {
	if r == nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(io.LimitReader(r, 512))
	return strings.TrimSpace(string(b))
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
