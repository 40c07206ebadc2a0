//go:build linux

package conformance

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
)

func TestReadNoDelay(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Skipf("no %s loopback here: %v", network, err)
			}
			defer ln.Close()
			client, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			server, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer server.Close()
			local := client.RemoteAddr().(*net.TCPAddr).AddrPort() // the server's side
			peer := client.LocalAddr().(*net.TCPAddr).AddrPort()
			for _, want := range []bool{false, true, false} {
				if err := server.(*net.TCPConn).SetNoDelay(want); err != nil {
					t.Fatal(err)
				}
				got, err := ReadNoDelay(os.Getpid(), local, peer)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("TCP_NODELAY read %v, set %v", got, want)
				}
			}
			// The client's own side is a different socket, found by its own
			// addresses: proof the match is on both ends.
			client.(*net.TCPConn).SetNoDelay(false)
			got, err := ReadNoDelay(os.Getpid(), peer, local)
			if err != nil || got {
				t.Fatalf("client side: %v, %v; want false", got, err)
			}
		})
	}
}

func TestReadNoDelayNoSocket(t *testing.T) {
	local := netip.MustParseAddrPort("127.0.0.1:1")
	peer := netip.MustParseAddrPort("127.0.0.1:2")
	_, err := ReadNoDelay(os.Getpid(), local, peer)
	if !errors.Is(err, ErrNoSocket) {
		t.Fatalf("got %v, want ErrNoSocket", err)
	}
}

func TestScanTCPTable(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:C351 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000
`
	local := netip.MustParseAddrPort("127.0.0.1:8080")
	inode, ok, err := scanTCPTable(strings.NewReader(table), local, netip.MustParseAddrPort("127.0.0.1:50000"))
	if err != nil || !ok || inode != 222 {
		t.Fatalf("got %d %v %v, want 222", inode, ok, err)
	}
	// TIME_WAIT holds no inode: not found.
	_, ok, err = scanTCPTable(strings.NewReader(table), local, netip.MustParseAddrPort("127.0.0.1:50001"))
	if err != nil || ok {
		t.Fatalf("TIME_WAIT: got %v %v, want not found", ok, err)
	}
	// An IPv4 connection to a [::] listener.
	v6 := "  sl header\n   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:C350 01 0:0 0:0 0 0 0 333 1\n"
	inode, ok, err = scanTCPTable(strings.NewReader(v6), local, netip.MustParseAddrPort("127.0.0.1:50000"))
	if err != nil || !ok || inode != 333 {
		t.Fatalf("mapped: got %d %v %v, want 333", inode, ok, err)
	}
}

func FuzzScanTCPTable(f *testing.F) {
	f.Add("h\n 0: 0100007F:1F90 0100007F:C350 01 0:0 0:0 0 0 0 222 1\n")
	f.Add("h\n 0: 0000000000000000FFFF00000100007F:1F90 0100007F:C350 01 0:0 0:0 0 0 0 9 1\n")
	f.Add("h\n 0: zz:1F90 0100007F:C350 01 0:0 0:0 0 0 0 x 1\n")
	local := netip.MustParseAddrPort("127.0.0.1:8080")
	peer := netip.MustParseAddrPort("127.0.0.1:50000")
	f.Fuzz(func(t *testing.T, table string) {
		inode, ok, err := scanTCPTable(strings.NewReader(table), local, peer)
		if err == nil && ok && inode == 0 {
			t.Fatal("found a socket with no inode")
		}
		for _, field := range strings.Fields(table) {
			if a, err := parseProcAddr(field); err == nil && !a.Addr().IsValid() {
				t.Fatalf("%q: an invalid address without error", field)
			}
		}
	})
}
