package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/lnk-dev/link/contract"
)

// The kit's own client, written apart from the endpoint package it checks
// so that the two can't share a misreading of the spec.

// maxAnswer is how much of an answer a bridge reads: 16 MiB, and room for
// the JSON-RPC around it.
const maxAnswer = 16<<20 + 64<<10

// wire is one connection to the endpoint, opened as a bridge opens one: a
// TCP connection that first proves it reaches the harness, then is upgraded
// to the message's WebSocket.
type wire struct {
	conn net.Conn
	br   *bufio.Reader
	base *url.URL // the endpoint's ACP address
}

// dialWire opens a TCP connection to the endpoint's host and port.
func dialWire(ctx context.Context, endpoint string) (*wire, error) {
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", u.Host, err)
	}
	return &wire{conn: conn, br: bufio.NewReader(conn), base: u}, nil
}

// parseEndpoint reads an endpoint's address: http://host:port/acp.
func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", truncate(endpoint, 64), err)
	}
	if u.Scheme != "http" || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("endpoint %q: an endpoint is http://<host>:<port>%s", truncate(endpoint, 64), contract.ACPPath)
	}
	if u.Path == "" {
		u.Path = contract.ACPPath
	}
	return u, nil
}

func (w *wire) Close() error { return w.conn.Close() }

// addrs are the connection's two ends: the client's, and the server's.
func (w *wire) addrs() (client, server netip.AddrPort) {
	c, _ := w.conn.LocalAddr().(*net.TCPAddr)
	s, _ := w.conn.RemoteAddr().(*net.TCPAddr)
	if c != nil {
		client = c.AddrPort()
	}
	if s != nil {
		server = s.AddrPort()
	}
	return client, server
}

// answer is an HTTP answer the kit read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// prove asks GET /_link/proof on the connection, with challenge unless it
// is "" and the agent's headers, and reads the answer whole, leaving the
// connection open for what follows.
func (w *wire) prove(ctx context.Context, challenge string, h http.Header) (answer, error) {
	u := *w.base
	u.Path, u.RawQuery = contract.ProofPath, ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return answer{}, fmt.Errorf("prove: %w", err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if challenge != "" {
		req.Header.Set(contract.HeaderChallenge, challenge)
	}
	w.deadline(ctx)
	defer w.conn.SetDeadline(time.Time{})
	if err := req.Write(w.conn); err != nil {
		return answer{}, fmt.Errorf("prove: send: %w", err)
	}
	resp, err := http.ReadResponse(w.br, req)
	if err != nil {
		return answer{}, fmt.Errorf("prove: read answer: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return answer{}, fmt.Errorf("prove: read body: %w", err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

func (w *wire) deadline(ctx context.Context) {
	if d, ok := ctx.Deadline(); ok {
		w.conn.SetDeadline(d)
	}
}

// errRefused is an upgrade the endpoint answered with something other
// than 101; refusal says what.
var errRefused = errors.New("upgrade refused")

// upgrade asks the endpoint to upgrade the connection to the message's
// WebSocket, with h (Authorization, Link-Agent, Link-Agent-Id). A refusal
// is errRefused, with the endpoint's answer.
func (w *wire) upgrade(ctx context.Context, h http.Header) (*rpc, answer, error) {
	if w.br.Buffered() > 0 {
		return nil, answer{}, fmt.Errorf("upgrade: the endpoint sent %d bytes nobody asked for", w.br.Buffered())
	}
	handed := false
	transport := &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if handed {
				return nil, errors.New("the message's connection is used once")
			}
			handed = true
			return w.conn, nil
		},
		DisableKeepAlives:  true,
		DisableCompression: true,
	}
	defer transport.CloseIdleConnections()
	ws, resp, err := websocket.Dial(ctx, w.base.String(), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: transport},
		HTTPHeader: h,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			a := answer{status: resp.StatusCode, header: resp.Header}
			if resp.Body != nil {
				a.body, _ = io.ReadAll(resp.Body)
			}
			return nil, a, fmt.Errorf("upgrade: %d %s: %w", resp.StatusCode, truncate(string(a.body), 80), errRefused)
		}
		return nil, answer{}, fmt.Errorf("upgrade: %w", err)
	}
	ws.SetReadLimit(maxAnswer)
	return &rpc{ws: ws}, answer{status: resp.StatusCode, header: resp.Header}, nil
}

// headers are a message's headers: the key as a bearer token, and the
// agent's name and ID when set.
func headers(key []byte, agent, agentID string) http.Header {
	h := http.Header{}
	if key != nil {
		h.Set(contract.HeaderAuthorization, contract.BearerPrefix+string(key))
	}
	if agent != "" {
		h.Set(contract.HeaderAgent, agent)
	}
	if agentID != "" {
		h.Set(contract.HeaderAgentID, agentID)
	}
	return h
}
