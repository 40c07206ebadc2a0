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

// noDelayListener sets TCP_NODELAY on every TCP connection it accepts:
// each message is a connection of its own, and without it a streamed
// answer's second frame waits ~40 ms on the peer's delayed ACK. Go sets
// it by default; the endpoint sets it anyway, explicitly, so nothing
// between can have turned it off.
type noDelayListener struct {
	net.Listener
	on bool
}

// Accept accepts a connection and sets its TCP_NODELAY. A connection
// whose option can't be set is closed and passed over.
func (l noDelayListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, ok := c.(*net.TCPConn)
		if !ok {
			return c, nil
		}
		if err := tc.SetNoDelay(l.on); err != nil {
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
