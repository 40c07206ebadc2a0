//go:build unix

package serve

import (
	"context"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// floodConns is how many connections without a key TestUnkeyedFlood
// holds open at once.
const floodConns = 10_000

// TestUnkeyedFlood: another process holding 10,000 connections open
// without the key (silent ones, headers begun and never ended, a proof
// asked and its upgrade never made) can't lock the owner out: a message
// with the key is answered within a second meanwhile, and the harness
// holds no more of them than its bound. The test raises its own
// RLIMIT_NOFILE to the hard limit to hold them; under a hard limit too
// low for 10,000 it holds as many as fit, and says so.
func TestUnkeyedFlood(t *testing.T) {
	n := floodConns
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// The harness's own descriptors: its bound of unkeyed ones, the
	// keyed ones, its files; the rest hold the flood.
	if room := int(lim.Cur) - endpoint.DefaultMaxUnkeyed - 512; room < n {
		t.Logf("RLIMIT_NOFILE is %d: holding %d connections, not %d", lim.Cur, room, n)
		n = room
	}
	s, _ := startServed(t, nil)
	addr := strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://"), "/acp")
	kinds := []string{
		"",
		"GET /_link/proof HTTP/1.1\r\nHost: x\r\n",
		"GET /_link/proof HTTP/1.1\r\nHost: x\r\nLink-Challenge: " + strings.Repeat("ab", 16) + "\r\n\r\n",
		"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
	}
	flood := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		flood = append(flood, c)
		if k := kinds[i%len(kinds)]; k != "" {
			io.WriteString(c, k)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	began := time.Now()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: s.URL(), Key: testKey})
	if err != nil {
		t.Fatalf("the keyed message's dial during the flood: %v", err)
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "link:flood"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "link:flood", []acp.Block{{Type: "text", Text: "hello"}}, nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	st := s.agents[0].srv.Unkeyed()
	t.Logf("flood: %d connections opened and held by the client; the harness held at most %d without a key (%d closed to make room); the keyed message answered in %v", n, st.Most, st.Evicted, took.Round(time.Millisecond))
	if st.Most > endpoint.DefaultMaxUnkeyed {
		t.Errorf("the harness held %d connections without a key, over its bound of %d", st.Most, endpoint.DefaultMaxUnkeyed)
	}
	// Generous for a loaded 2-core machine: the point is that the keyed
	// message is served during the flood, not how fast (a starved one
	// would run into the 10 s context).
	if took > 5*time.Second {
		t.Errorf("the keyed message took %v during the flood, want within 5 s", took)
	}
}
