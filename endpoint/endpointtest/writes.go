// Package endpointtest is what the tests that count an endpoint's writes
// share: a listener whose connections record each write made to them, as
// one system call makes it (WritesListener, on a loopback port by
// Listen), and what each write after the WebSocket's upgrade carried,
// frame by frame (Conn.Frames).
package endpointtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// Listen is a WritesListener on a free loopback port, closed when the
// test ends, and the address of the endpoint's ACP path on it.
func Listen(t testing.TB) (*WritesListener, string) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	return &WritesListener{Listener: tcp}, "http://" + tcp.Addr().String() + contract.ACPPath
}

// WritesListener wraps each connection it accepts in a Conn.
type WritesListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*Conn
}

// Accept accepts a connection, recording its writes.
func (l *WritesListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	wc := &Conn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, wc)
	l.mu.Unlock()
	return wc, nil
}

// Conns are the connections accepted so far, in order.
func (l *WritesListener) Conns() []*Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Conn(nil), l.conns...)
}

// Conn records each write made to it, as one system call makes it.
type Conn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

// Write records p and writes it.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, bytes.Clone(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// Writes are the writes made so far, each as it was made.
func (c *Conn) Writes() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.writes...)
}

// Frames names what each write after the upgrade's answer carried, its
// frames joined by "+": a response "result", a notification its method
// (a session/update its sessionUpdate), a close frame "close". A write
// that isn't whole server frames of JSON is an error.
func (c *Conn) Frames() ([]string, error) {
	var out []string
	upgraded := false
	for _, w := range c.Writes() {
		if !upgraded {
			upgraded = bytes.HasPrefix(w, []byte("HTTP/1.1 101 "))
			continue
		}
		var kinds []string
		for len(w) > 0 {
			op, payload, rest, ok := serverFrame(w)
			if !ok {
				return nil, fmt.Errorf("a write that isn't whole WebSocket frames: %q", w)
			}
			w = rest
			if op == 8 {
				kinds = append(kinds, "close")
				continue
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					Update struct {
						SessionUpdate string `json:"sessionUpdate"`
					} `json:"update"`
				} `json:"params"`
			}
			if err := json.Unmarshal(payload, &m); err != nil {
				return nil, fmt.Errorf("a frame that isn't JSON: %q", payload)
			}
			switch {
			case m.Params.Update.SessionUpdate != "":
				kinds = append(kinds, m.Params.Update.SessionUpdate)
			case m.Method != "":
				kinds = append(kinds, m.Method)
			default:
				kinds = append(kinds, "result")
			}
		}
		out = append(out, strings.Join(kinds, "+"))
	}
	return out, nil
}

// serverFrame splits the first of w's frames, as a server sends them
// (unmasked): its opcode, its payload and what follows it.
func serverFrame(w []byte) (op byte, payload, rest []byte, ok bool) {
	if len(w) < 2 || w[1]&0x80 != 0 {
		return 0, nil, nil, false
	}
	n, at := uint64(w[1]&0x7f), 2
	switch n {
	case 126:
		if len(w) < 4 {
			return 0, nil, nil, false
		}
		n, at = uint64(binary.BigEndian.Uint16(w[2:])), 4
	case 127:
		if len(w) < 10 {
			return 0, nil, nil, false
		}
		n, at = binary.BigEndian.Uint64(w[2:]), 10
	}
	if uint64(len(w)-at) < n {
		return 0, nil, nil, false
	}
	return w[0] & 0x0f, w[at : at+int(n)], w[at+int(n):], true
}
