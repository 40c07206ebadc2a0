// Package mcpserve is what every one of Link's tool servers (memory, run,
// file, the scheduler) shares to be reached by Link Harness over MCP: a
// listener on the loopback answering at one path alone, /mcp/<secret>
// (Tool.Start), and the secret kept in a file of the agent's home across
// starts (Tool.KeepSecret), so that $LNK_<TOOL> set once stays true. Each
// message names the tool it is said of.
package mcpserve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Tool names one of Link's tool servers in what mcpserve says of it.
type Tool struct {
	Name  string // its short name: "memory", "run"
	Title string // what a person calls it: "Link Memory"
	Env   string // the variable Link Harness finds it by: "LNK_MEMORY"
}

// Running is a tool server listening on the loopback, at an address
// whose path carries a secret of its own.
type Running struct {
	srv  *http.Server
	host string // the listener's host:port
	url  string
	done chan error
}

// Start serves h (the tool's MCP handler) at addr on this machine's
// loopback ("127.0.0.1:0" picks a free port) until Close. An address off
// the loopback is refused: the tool is the agent's alone, reached by its
// harness on this machine. The loopback is every local user's, so h
// answers at one path alone, /mcp/<secret> (NewSecret, or KeepSecret's
// for an address that lasts across starts), known only by URL (what
// $<t.Env> is set to); a request at any other path is refused, 404,
// before anything of it is read (guard).
func (t Tool) Start(ctx context.Context, h http.Handler, addr string, secret Secret) (*Running, error) {
	if secret.v == "" {
		return nil, fmt.Errorf("%s: no secret to answer at (NewSecret or KeepSecret makes one)", t.Name)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s address %q: %w", t.Name, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s address %q: %s listens on the loopback alone (127.0.0.1)", t.Name, addr, t.Name)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen: %w", t.Name, err)
	}
	path := mcpPath + secret.v
	r := &Running{
		srv:  &http.Server{Handler: guard(path, t.refused(), h), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10},
		host: ln.Addr().String(),
		url:  "http://" + ln.Addr().String() + path,
		done: make(chan error, 1),
	}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// mcpPath begins the one path a tool server answers at; its secret
// ends it.
const mcpPath = "/mcp/"

// refused is what a request at another path is answered: the rule, never
// the path.
func (t Tool) refused() string {
	return "not found: " + t.Title + " answers only at the address $" + t.Env + " names, with its secret\n"
}

// guard serves h at path alone, compared in constant time (its length,
// the same for every server, is all a timing tells); any other request
// is answered 404 with its body unread, and nothing of it is logged.
func guard(path, refused string, h http.Handler) http.Handler {
	want := []byte(path)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if subtle.ConstantTimeCompare([]byte(req.URL.Path), want) != 1 || req.URL.RawPath != "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(refused))
			return
		}
		h.ServeHTTP(w, req)
	})
}

// URL is the server's address with its secret, what the tool's variable
// ($LNK_MEMORY, $LNK_RUN) is set to: give it to the agent's harness alone, and never log it.
func (r *Running) URL() string { return r.url }

// Host is the server's host:port, without its secret: what may be said
// of where it listens.
func (r *Running) Host() string { return r.host }

// Close stops the server, its sessions with it.
func (r *Running) Close() error {
	err := r.srv.Close()
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
