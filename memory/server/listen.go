package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is a memory server listening on the loopback.
type Running struct {
	srv  *http.Server
	url  string
	done chan error
}

// Start serves h (Handler's) at addr on this machine's loopback
// ("127.0.0.1:0" picks a free port) until Close. An address off the
// loopback is refused: memory is the agent's alone, reached by its
// harness on this machine.
func Start(ctx context.Context, h http.Handler, addr string) (*Running, error) {
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
	r := &Running{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10},
		url:  "http://" + ln.Addr().String() + "/mcp",
		done: make(chan error, 1),
	}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// URL is the server's address, as $LNK_MEMORY names it.
func (r *Running) URL() string { return r.url }

// Close stops the server, its sessions with it.
func (r *Running) Close() error {
	err := r.srv.Close()
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
