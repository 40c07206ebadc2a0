package endpoint

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
)

// TestProvedNotEvicted: a stream of new connections without a key, as
// fast as four dialers make them, each closing its own past 64 (the
// endpoint holding about its bound of 256 all along), never closes a
// bridge's connection between its proof and its upgrade: 100 keyed
// messages meanwhile all succeed. Their latency is logged.
func TestProvedNotEvicted(t *testing.T) {
	ts := start(t, Config{})
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.url, "http://"), contract.ACPPath)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	quiet := keyedMessages(t, ctx, ts, 100)
	stop := make(chan struct{})
	var dialed atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var ring []net.Conn
			defer func() {
				for _, c := range ring {
					c.Close()
				}
			}()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				dialed.Add(1)
				ring = append(ring, c)
				if len(ring) > 250/4 { // 250 held at most, as the stream of issue #24
					ring[0].Close()
					ring = ring[1:]
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	testwait.For(t, 30*time.Second, "a connection evicted: the stream at the bound", func() bool { return ts.Unkeyed().Evicted > 0 })
	began, evictedBefore := time.Now(), ts.Unkeyed().Evicted
	dialedBefore := dialed.Load()
	took := keyedMessages(t, ctx, ts, 100)
	during := time.Since(began)
	rate := float64(dialed.Load()-dialedBefore) / during.Seconds()
	evicted := ts.Unkeyed().Evicted - evictedBefore
	if len(took) > 0 && len(quiet) > 0 {
		t.Logf("100 keyed messages during a stream of %.0f new connections a second (%d evicted): %d failed; latency p50 %v, p90 %v (alone: p50 %v, p90 %v)",
			rate, evicted, 100-len(took), pct(took, 50), pct(took, 90), pct(quiet, 50), pct(quiet, 90))
	}
	if evicted == 0 {
		t.Fatal("nothing evicted while the messages were sent: the stream didn't press")
	}
}

// keyedMessages sends n keyed messages, one after another, each on a
// connection of its own, and returns the times of those that succeeded,
// sorted; each failure fails the test.
func keyedMessages(t *testing.T, ctx context.Context, ts *testServer, n int) []time.Duration {
	var took []time.Duration
	for i := range n {
		at := time.Now()
		c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
		if err == nil {
			var text string
			_, text, err = message(ctx, c, "link:x", "hi")
			if err == nil && text != "echo: hi" {
				t.Errorf("message %d answered %q", i, text)
			}
		}
		if err != nil {
			t.Errorf("message %d: %v", i, err)
			continue
		}
		took = append(took, time.Since(at))
	}
	slices.Sort(took)
	return took
}

// pct is the p-th percentile of sorted.
func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[len(sorted)*p/100].Round(10 * time.Microsecond)
}

// TestProvedKeptThroughStream: a connection that got its proof is never
// the one closed to make room: it waits for its upgrade while more new
// connections than the bound come and go, and is upgraded on the same
// connection after them.
func TestProvedKeptThroughStream(t *testing.T) {
	ts := start(t, Config{MaxUnkeyed: 16})
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.url, "http://"), contract.ACPPath)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	challenge := contract.NewChallenge()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n%s: %s\r\n\r\n", contract.ProofPath, contract.HeaderChallenge, challenge)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK || !contract.VerifyProof([]byte("key-main"), challenge, resp.Header.Get(contract.HeaderProof)) {
		t.Fatalf("proof: %v, %v", resp, err)
	}
	resp.Body.Close()
	// A stream of 64 new connections, each held, then closed: past the
	// bound of 16, every one older but the proved closed to make room.
	var stream []net.Conn
	for range 64 {
		s, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, s)
	}
	testwait.For(t, 10*time.Second, "the stream's connections accepted, all but 16 evicted", func() bool { return ts.Unkeyed().Evicted >= 64+1-16 })
	for _, s := range stream {
		s.Close()
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer key-main\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", contract.ACPPath)
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade after the stream: %v, %v (%+v)", resp, err, ts.Unkeyed())
	}
}
