//go:build unix

package endpoint

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// noDelay reads TCP_NODELAY back from a connection's socket.
func noDelay(t *testing.T, c net.Conn) bool {
	t.Helper()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		t.Fatalf("%T is not a TCP connection", c)
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := raw.Control(func(fd uintptr) { v, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return v != 0
}

// TestNoDelay: the endpoint sets TCP_NODELAY on each connection it
// accepts, and leaves it off only when told to.
func TestNoDelay(t *testing.T) {
	for _, off := range []bool{false, true} {
		ts := start(t, Config{NoDelayOff: off})
		c, err := Dial(testCtx(t), DialOptions{URL: ts.url, Key: []byte("key-main")})
		if err != nil {
			t.Fatal(err)
		}
		conns := ts.ln.accepted()
		if len(conns) != 1 {
			t.Fatalf("accepted %d connections, want 1", len(conns))
		}
		if got := noDelay(t, conns[0]); got == off {
			t.Errorf("NoDelayOff %v: TCP_NODELAY on the accepted socket is %v", off, got)
		}
		c.CloseNow()
	}
}
