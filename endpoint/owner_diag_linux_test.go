package endpoint

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"testing"
)

// TestListenerUIDDiag asks the socket diagnostics for listeners: this
// user's on its address and on every address of its port, another
// user's (root only), and none where nothing listens, which is an error
// (checkOwner then reads the tables).
func TestListenerUIDDiag(t *testing.T) {
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if uid, err := listenerUID(own.Addr().(*net.TCPAddr)); err != nil || uid != os.Getuid() {
		t.Fatalf("this user's listener: uid %d, %v; want %d", uid, err, os.Getuid())
	}

	every, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	at := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: every.Addr().(*net.TCPAddr).Port}
	if uid, err := listenerUID(at); err != nil || uid != os.Getuid() {
		t.Fatalf("a listener on every address, reached at %s: uid %d, %v", at, uid, err)
	}
	every.Close()
	if uid, err := listenerUID(at); err == nil {
		t.Fatalf("no listener at %s: uid %d, no error", at, uid)
	}

	if six, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		defer six.Close()
		if uid, err := listenerUID(six.Addr().(*net.TCPAddr)); err != nil || uid != os.Getuid() {
			t.Fatalf("IPv6 listener: uid %d, %v", uid, err)
		}
	}

	if os.Getuid() == 0 {
		other := listenAs(t, 65534)
		if uid, err := listenerUID(other.Addr().(*net.TCPAddr)); err != nil || uid != 65534 {
			t.Fatalf("another user's listener: uid %d, %v; want 65534", uid, err)
		}
	}
}

// TestDiagAnswerShort: answers too short, of another kind, or of a
// socket not listening are no answer.
func TestDiagAnswerShort(t *testing.T) {
	req, err := diagRequest(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	established := make([]byte, nlHeaderLen+diagMsgLen)
	copy(established, req)
	binary.NativeEndian.PutUint32(established, uint32(len(established)))
	established[nlHeaderLen+1] = 1 // TCP_ESTABLISHED
	listening := append([]byte{}, established...)
	listening[nlHeaderLen+1] = tcpListen
	if _, err := diagAnswer(listening); err != nil {
		t.Fatalf("a listener's answer: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"header only":   req[:nlHeaderLen],
		"the request":   req, // right kind, but a request's body is shorter than a message's
		"cut short":     listening[:len(listening)-1],
		"not listening": established,
	} {
		if uid, err := diagAnswer(b); err == nil {
			t.Errorf("%s: uid %d, no error", name, uid)
		}
	}
}

// TestListenerUIDShared: lookups at once over the one diagnostics
// socket each get their own answer, this user's listener's uid or no
// socket where none listens, and a socket closed after a failure is
// opened again.
func TestListenerUIDShared(t *testing.T) {
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	none := gone.Addr().(*net.TCPAddr)
	gone.Close()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 50 {
				if (g+i)%2 == 0 {
					if uid, err := listenerUID(own.Addr().(*net.TCPAddr)); err != nil || uid != os.Getuid() {
						errs <- fmt.Errorf("this user's listener: uid %d, %v", uid, err)
						return
					}
				} else if uid, err := listenerUID(none); err == nil {
					errs <- fmt.Errorf("no listener at %s: uid %d, no error", none, uid)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	diag.mu.Lock()
	diag.close()
	diag.mu.Unlock()
	if uid, err := listenerUID(own.Addr().(*net.TCPAddr)); err != nil || uid != os.Getuid() {
		t.Fatalf("after the socket was closed: uid %d, %v", uid, err)
	}
}
