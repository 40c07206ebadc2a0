package endpoint

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// The owner of the listening socket is asked of the kernel's socket
// diagnostics (listenerUID): one lookup of that socket, where the tables
// in /proc write every socket of the machine, each a line to parse.

// socketTables are the kernel's tables of TCP sockets, IPv4 and IPv6.
var socketTables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// checkOwner refuses an endpoint reached on loopback whose listening
// socket belongs to another user than this process's, as the kernel's
// socket tables say. Another user's process listening on a loopback
// port could otherwise relay the proof's challenge to the real harness,
// prove itself with its answer, and be sent the key. An endpoint off
// loopback isn't checked: its socket is another machine's.
func checkOwner(c net.Conn) error {
	remote, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok || !remote.IP.IsLoopback() {
		return nil
	}
	uid, err := listenerUID(remote)
	if err != nil {
		// No socket diagnostics here, or no answer from them: the
		// tables, read whole, say the same more slowly.
		return checkOwnerTables(remote)
	}
	return sameUser(remote, uid)
}

// sameUser refuses a listener of uid's at remote unless uid is this
// process's user.
func sameUser(remote *net.TCPAddr, uid int) error {
	if me := os.Getuid(); uid != me {
		return fmt.Errorf("the endpoint listening at %s belongs to user %d, not to this one (%d): another user's process answers on that port, so the key is not sent to it", remote, uid, me)
	}
	return nil
}

// checkOwnerTables is checkOwner by the kernel's socket tables in /proc,
// read whole: where socket diagnostics (listenerUID) don't answer.
func checkOwnerTables(remote *net.TCPAddr) error {
	for _, table := range socketTables {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return fmt.Errorf("check the endpoint's owner: %w", err)
		}
		uid, found, err := listenerOwner(f, remote)
		f.Close()
		if err != nil {
			return fmt.Errorf("check the endpoint's owner: %s: %w", table, err)
		}
		if found {
			return sameUser(remote, uid)
		}
	}
	return fmt.Errorf("check the endpoint's owner: no socket listens at %s in the kernel's tables (%s)", remote, strings.Join(socketTables, ", "))
}

// stateListen is a listening socket's state in the tables.
const stateListen = "0A"

// listenerOwner reads a /proc/net/tcp table and returns the uid of the
// socket listening where addr is: on its address, else on every
// address (0.0.0.0, ::) of its port, as the kernel picks.
func listenerOwner(r io.Reader, addr *net.TCPAddr) (uid int, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Scan() // the heading
	wildcard := -1
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[3] != stateListen {
			continue
		}
		l, err := parseSocketAddr(f[1])
		if err != nil {
			return 0, false, err
		}
		if l.Port != addr.Port || !l.IP.Equal(addr.IP) && !l.IP.IsUnspecified() {
			continue
		}
		uid, err := strconv.Atoi(f[7])
		if err != nil {
			return 0, false, fmt.Errorf("uid %q: %w", f[7], err)
		}
		if l.IP.IsUnspecified() {
			wildcard = uid
			continue
		}
		return uid, true, nil
	}
	if err := sc.Err(); err != nil {
		return 0, false, err
	}
	return wildcard, wildcard >= 0, nil
}

func sameAddr(a, b *net.TCPAddr) bool { return a.Port == b.Port && a.IP.Equal(b.IP) }

// parseSocketAddr reads an address as the tables write it: the IP's
// 32-bit words in hex, each in the machine's byte order, then ':' and
// the port in hex (0100007F:1F90 is 127.0.0.1:8080).
func parseSocketAddr(s string) (*net.TCPAddr, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(ipHex)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, fmt.Errorf("address %q: not the tables' form", s)
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("address %q: port: %w", s, err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
