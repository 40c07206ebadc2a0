package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is a memory server listening on the loopback, at an address
// whose path carries a secret of its own.
type Running struct {
	srv  *http.Server
	host string // the listener's host:port
	url  string
	done chan error
}

// Start serves h (Handler's) at addr on this machine's loopback
// ("127.0.0.1:0" picks a free port) until Close. An address off the
// loopback is refused: memory is the agent's alone, reached by its
// harness on this machine. The loopback is every local user's, so h
// answers at one path alone, /mcp/<secret> (NewSecret, or KeepSecret's
// for an address that lasts across starts), known only by URL (what
// $LNK_MEMORY is set to); a request at any other path is refused, 404,
// before anything of it is read (guard).
func Start(ctx context.Context, h http.Handler, addr string, secret Secret) (*Running, error) {
	if secret.v == "" {
		return nil, errors.New("memory: no secret to answer at (NewSecret or KeepSecret makes one)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("memory address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("memory address %q: memory listens on the loopback alone (127.0.0.1)", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("memory: listen: %w", err)
	}
	path := mcpPath + secret.v
	r := &Running{
		srv:  &http.Server{Handler: guard(path, h), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10},
		host: ln.Addr().String(),
		url:  "http://" + ln.Addr().String() + path,
		done: make(chan error, 1),
	}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// mcpPath begins the one path a memory server answers at; its secret
// ends it.
const mcpPath = "/mcp/"

// refused is what a request at another path is answered: the rule, never
// the path.
const refused = "not found: Link Memory answers only at the address $LNK_MEMORY names, with its secret\n"

// guard serves h at path alone, compared in constant time (its length,
// the same for every server, is all a timing tells); any other request
// is answered 404 with its body unread, and nothing of it is logged.
func guard(path string, h http.Handler) http.Handler {
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

// URL is the server's address with its secret, what $LNK_MEMORY is set
// to: give it to the agent's harness alone, and never log it.
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
