package endpoint

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// heldConn is an upgraded connection whose writes can be held and sent
// together (acp.Holder): a response and the notifications that follow it
// at once go in one write, one system call, and wake the client once.
type heldConn struct {
	net.Conn
	mu   sync.Mutex
	held bool
	buf  []byte
}

// Write writes p, or keeps it for Send while the connection is held.
func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.held {
		c.buf = append(c.buf, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// Hold keeps every write until Send.
func (c *heldConn) Hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// Send writes what was held, in one write, and stops holding.
func (c *heldConn) Send() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if cap(c.buf) > maxHeld {
		c.buf = nil // a large batch's buffer isn't kept for the connection's life
	}
	return err
}

// maxHeld is the most of a held batch's buffer a connection keeps.
const maxHeld = 16 << 10

// holdingWriter is the ResponseWriter websocket.Accept hijacks: the
// connection it hands over writes through a heldConn, kept in conn.
type holdingWriter struct {
	http.ResponseWriter
	conn *heldConn
}

// Hijack takes the connection from net/http, as a heldConn, its buffered
// writer writing to it.
func (w *holdingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil { // the 101, flushed by net/http already
		nc.Close()
		return nil, nil, err
	}
	w.conn = &heldConn{Conn: nc}
	brw.Writer.Reset(w.conn)
	return w.conn, brw, nil
}
