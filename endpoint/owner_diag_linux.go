package endpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"golang.org/x/sys/unix"
)

// Socket diagnostics (sock_diag(7)): the kernel looks up one TCP socket
// and answers with its owner. Asked for the socket at address:port
// talking to 0.0.0.0:0, it finds none established and answers with the
// socket listening there, the one it would hand a new connection to
// (on the address, else on every address of the port), as the tables
// would be read for it.
const (
	diagReqLen  = 56 // struct inet_diag_req_v2
	diagMsgLen  = 72 // struct inet_diag_msg
	diagUIDAt   = 64 // its idiag_uid
	tcpListen   = 10 // TCP_LISTEN, a socket's state
	nlHeaderLen = unix.SizeofNlMsghdr
)

// errNoDiag is a lookup the socket diagnostics didn't answer.
var errNoDiag = errors.New("no answer from the socket diagnostics")

// listenerUID is the uid of the socket listening where addr, a loopback
// address, is reached, as the kernel's socket diagnostics say; an error
// where they don't answer (or find no such socket), so the caller reads
// the tables instead. The diagnostics' socket is kept open between dials
// (diag), one lookup at a time: a dial costs the lookup's two calls, not
// a socket's opening and closing too.
func listenerUID(addr *net.TCPAddr) (int, error) {
	req, err := diagRequest(addr)
	if err != nil {
		return 0, err
	}
	diag.mu.Lock()
	defer diag.mu.Unlock()
	uid, err := diag.ask(req)
	if err != nil && !errors.Is(err, errNoDiag) {
		diag.close() // the next lookup opens a new one
	}
	return uid, err
}

// diag is the process's socket diagnostics socket, opened at its first
// lookup and again after one that failed.
var diag diagSocket

// diagSocket is a socket diagnostics (NETLINK_SOCK_DIAG) socket, asked
// one lookup at a time under mu.
type diagSocket struct {
	mu   sync.Mutex
	fd   int
	open bool
	seq  uint32
}

// ask sends req, numbered anew, and reads its answer, passing over any
// answer of an earlier lookup's number.
func (d *diagSocket) ask(req []byte) (int, error) {
	if !d.open {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return 0, err
		}
		d.fd, d.open = fd, true
	}
	d.seq++
	binary.NativeEndian.PutUint32(req[8:], d.seq)
	if err := unix.Sendto(d.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	var buf [512]byte
	for {
		n, _, err := unix.Recvfrom(d.fd, buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n >= nlHeaderLen && binary.NativeEndian.Uint32(buf[8:]) != d.seq {
			continue // an earlier lookup's answer
		}
		return diagAnswer(buf[:n])
	}
}

// close closes the socket; the next lookup opens another.
func (d *diagSocket) close() {
	if d.open {
		unix.Close(d.fd)
		d.open = false
	}
}

// diagRequest is the netlink message asking for the TCP socket listening
// where addr is: SOCK_DIAG_BY_FAMILY, one socket, not a dump.
func diagRequest(addr *net.TCPAddr) ([]byte, error) {
	family, ip := uint8(unix.AF_INET6), addr.IP.To16()
	if v4 := addr.IP.To4(); v4 != nil {
		family, ip = unix.AF_INET, v4
	}
	if ip == nil || addr.Port <= 0 || addr.Port > 0xffff {
		return nil, fmt.Errorf("address %s: not a TCP address", addr)
	}
	b := make([]byte, nlHeaderLen+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], 1) // sequence, numbered anew by diagSocket.ask
	r := b[nlHeaderLen:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<tcpListen)
	id := r[8:] // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(addr.Port))
	copy(id[4:20], ip)                // the source; the destination stays 0.0.0.0:0
	ne.PutUint32(id[40:], ^uint32(0)) // no cookie
	ne.PutUint32(id[44:], ^uint32(0))
	return b, nil
}

// diagAnswer reads the diagnostics' answer to diagRequest: the
// listening socket's uid, else errNoDiag (an error answer, no such
// socket, or one not listening).
func diagAnswer(b []byte) (int, error) {
	ne := binary.NativeEndian
	if len(b) < nlHeaderLen {
		return 0, errNoDiag
	}
	size, kind := ne.Uint32(b[0:]), ne.Uint16(b[4:])
	if kind != unix.SOCK_DIAG_BY_FAMILY || int(size) < nlHeaderLen+diagMsgLen || int(size) > len(b) {
		return 0, errNoDiag // NLMSG_ERROR: ENOENT for no socket, or no diagnostics for TCP
	}
	m := b[nlHeaderLen:size]
	if m[1] != tcpListen {
		return 0, errNoDiag
	}
	return int(ne.Uint32(m[diagUIDAt:])), nil
}
