//go:build linux

package conformance

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadNoDelay reads TCP_NODELAY from a socket of process pid, where the
// system says: the TCP socket whose own address is local and whose peer is
// peer. It finds the socket's inode in /proc/<pid>/net/tcp and tcp6, the
// descriptor that holds that inode in /proc/<pid>/fd, takes a copy of it
// with pidfd_open and pidfd_getfd, and asks getsockopt(IPPROTO_TCP,
// TCP_NODELAY). Reading another process's socket needs the right to trace
// it (the same user, or CAP_SYS_PTRACE); its own process always may.
func ReadNoDelay(pid int, local, peer netip.AddrPort) (bool, error) {
	inode, err := findSocketInode(pid, local, peer)
	if err != nil {
		return false, err
	}
	fd, err := findInodeFD(pid, inode)
	if err != nil {
		return false, err
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return false, fmt.Errorf("pidfd_getfd %d fd %d: %w", pid, fd, err)
	}
	defer unix.Close(sock)
	v, err := unix.GetsockoptInt(sock, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil {
		return false, fmt.Errorf("getsockopt TCP_NODELAY of %d fd %d: %w", pid, fd, err)
	}
	return v != 0, nil
}

// findSocketInode finds in pid's /proc/<pid>/net/tcp and tcp6 the inode of
// the socket from local to peer.
func findSocketInode(pid int, local, peer netip.AddrPort) (uint64, error) {
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join("/proc", strconv.Itoa(pid), "net", name)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) && name == "tcp6" {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return 0, fmt.Errorf("read sockets of %d: %w", pid, err)
		}
		inode, found, err := scanTCPTable(f, local, peer)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if found {
			return inode, nil
		}
	}
	return 0, fmt.Errorf("find socket %s -> %s in process %d: %w", local, peer, pid, ErrNoSocket)
}

// scanTCPTable reads a /proc/net/tcp table for the socket from local to
// peer and says its inode.
func scanTCPTable(r io.Reader, local, peer netip.AddrPort) (uint64, bool, error) {
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		l, err := parseProcAddr(f[1])
		if err != nil {
			return 0, false, err
		}
		p, err := parseProcAddr(f[2])
		if err != nil {
			return 0, false, err
		}
		if !sameAddr(l, local) || !sameAddr(p, peer) {
			continue
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("inode %q: %w", f[9], err)
		}
		if inode == 0 { // a socket in TIME_WAIT holds no inode
			continue
		}
		return inode, true, nil
	}
	return 0, false, sc.Err()
}

// parseProcAddr reads an address as /proc/net/tcp writes it: the IP's
// 32-bit words in hex, each in the machine's byte order, ':' and the port
// in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok || len(ipHex) != 8 && len(ipHex) != 32 || len(portHex) != 4 {
		return netip.AddrPort{}, fmt.Errorf("socket address %q: not as /proc writes one", truncate(s, 48))
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("socket address %q: %w", truncate(s, 48), err)
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("socket port %q: %w", portHex, err)
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(addr, uint16(port)), nil
}

// sameAddr compares addresses with an IPv4 one mapped into IPv6 equal to
// itself: a socket listening on [::] holds IPv4 connections that way.
func sameAddr(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// findInodeFD finds which of pid's descriptors holds socket inode.
func findInodeFD(pid int, inode uint64) (int, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("read descriptors of %d: %w", pid, err)
	}
	want := []byte("socket:[" + strconv.FormatUint(inode, 10) + "]")
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while we looked
		}
		if bytes.Equal([]byte(link), want) {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			return fd, nil
		}
	}
	return 0, fmt.Errorf("find descriptor of socket inode %d in process %d: %w", inode, pid, ErrNoSocket)
}
