package endpoint

import (
	"context"
	"net"
	"time"
)

// Listen listens on addr (host:port) for the endpoint's connections,
// without TCP keep-alive: each connection carries one message and ends
// with its answer, so probes every 15 s would never fire, and turning
// them on costs four setsockopt calls per connection.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(ctx, "tcp", addr)
}

// noDelayListener has TCP_NODELAY on on every TCP connection it
// accepts: each message is a connection of its own, and without it a
// streamed answer's second frame waits ~40 ms on the peer's delayed ACK.
// Go's net package turns it on for every TCP connection it makes
// (net.TCPConn's default), so an accepted one has it already, set by the
// accept: the listener sets it only to turn it off (on false, the
// benchmark's off case), one setsockopt less a connection. TestNoDelay
// reads it back from the accepted socket.
type noDelayListener struct {
	net.Listener
	on bool
}

// Accept accepts a connection, and turns its TCP_NODELAY off when the
// listener is told to. A connection whose option can't be set is closed
// and passed over.
func (l noDelayListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, ok := c.(*net.TCPConn)
		if !ok || l.on {
			return c, nil
		}
		if err := tc.SetNoDelay(false); err != nil {
			c.Close()
			continue
		}
		return c, nil
	}
}

var (
	deadlinePast = time.Unix(1, 0)
	noDeadline   time.Time
)
