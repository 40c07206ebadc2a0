package endpoint

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListenerOwnerTable reads the tables' own lines: the socket
// listening on the address, else on every address of its port, IPv4
// and IPv6; an established one is never taken for it.
func TestListenerOwnerTable(t *testing.T) {
	lo, any4 := "0100007F", "00000000"
	if !isLittleEndian() {
		lo = "7F000001"
	}
	head := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	line := func(local, remote, st, uid string) string {
		return "   0: " + local + " " + remote + " " + st + " 00000000:00000000 00:00000000 00000000  " + uid + "        0 4242 1 0 100 0 0 10 0\n"
	}
	at := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, tc := range []struct {
		name, table string
		uid         int
		found       bool
	}{
		{"on the address", head + line(lo+":C350", lo+":1F90", "01", "7") + line(lo+":1F90", any4+":0000", "0A", "1001"), 1001, true},
		{"on every address", head + line(any4+":1F90", any4+":0000", "0A", "1002"), 1002, true},
		{"the address over every address", head + line(any4+":1F90", any4+":0000", "0A", "1002") + line(lo+":1F90", any4+":0000", "0A", "1003"), 1003, true},
		{"another port", head + line(lo+":1F91", any4+":0000", "0A", "1004"), 0, false},
		{"established only", head + line(lo+":1F90", lo+":C350", "01", "1005"), 0, false},
		{"IPv6, every address", head + line(strings.Repeat("0", 32)+":1F90", strings.Repeat("0", 32)+":0000", "0A", "1006"), 1006, true},
	} {
		uid, found, err := listenerOwner(strings.NewReader(tc.table), at)
		if err != nil || found != tc.found || found && uid != tc.uid {
			t.Errorf("%s: uid %d, found %v, %v; want %d, %v", tc.name, uid, found, err, tc.uid, tc.found)
		}
	}
}

func isLittleEndian() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

// listenAs listens on 127.0.0.1:0 with a socket made as uid, by setting
// the file-system uid of the one thread that makes it (root only).
func listenAs(t *testing.T, uid int) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := unix.SetfsuidRetUid(uid)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	unix.SetfsuidRetUid(prev)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "relay")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// TestDialRefusesAnotherUsersEndpoint: a relay of another user's,
// listening on another loopback port and passing every byte to the real
// endpoint (which would prove itself through it), is refused before
// anything is sent: Dial says whose socket it is, and the endpoint never
// sees a proof asked.
func TestDialRefusesAnotherUsersEndpoint(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a socket as another user needs root; TestListenerOwnerTable checks the reading")
	}
	ts := start(t, Config{})
	target := strings.TrimSuffix(strings.TrimPrefix(ts.url, "http://"), "/acp")
	ln := listenAs(t, 65534)
	relayed := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		up, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer up.Close()
		go io.Copy(c, up)
		n, _ := io.Copy(up, c)
		relayed <- n
	}()
	_, err := Dial(testCtx(t), DialOptions{URL: "http://" + ln.Addr().String() + "/acp", Key: []byte("key-main")})
	var de *DialError
	if !errors.As(err, &de) || de.Step != StepConnect || !strings.Contains(err.Error(), "belongs to user 65534") {
		t.Fatalf("dial through another user's relay: %v", err)
	}
	if n := <-relayed; n != 0 {
		t.Fatalf("%d bytes were sent to the relay", n)
	}
	// The real endpoint, this user's, is dialed as ever.
	c, err := Dial(testCtx(t), DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
}
