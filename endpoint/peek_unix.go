//go:build unix

package endpoint

import (
	"net"
	"syscall"
)

// hasBytes says whether bytes wait to be read on c, a request begun that
// the server hasn't read yet, without reading them: a peek that doesn't
// wait, made beside the server's own read (Control, not Read, which
// would wait for the server's read to end).
func hasBytes(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	got := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		got = err == nil && n > 0
	})
	return got
}
