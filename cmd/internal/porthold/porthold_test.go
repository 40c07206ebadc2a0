package porthold

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A port this test process listens on is found taken by this process,
// and a second listen's error names it and says what to do next.
func TestExplainTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = net.Listen("tcp", ln.Addr().String())
	if !Taken(err) {
		t.Fatalf("a second listen: %v, not taken", err)
	}
	got := Explain(err, port, "say another --port").Error()
	if !strings.Contains(got, "say another --port") || !strings.Contains(got, "is taken by") {
		t.Fatalf("%s", got)
	}
	h, ok := Find(port)
	if !findsHolders {
		if ok {
			t.Fatalf("found %+v where no holder can be found", h)
		}
		return
	}
	if !ok || h.PID != os.Getpid() || !strings.Contains(h.Command, "porthold.test") {
		t.Fatalf("holder %+v %v, want this process %d", h, ok, os.Getpid())
	}
	if !strings.Contains(got, "process "+strconv.Itoa(os.Getpid())+" (") || !strings.Contains(got, "kill "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("%s", got)
	}
	// A port nobody listens on has no holder.
	ln.Close()
	if h, ok := Find(port); ok {
		t.Fatalf("closed port held by %+v", h)
	}
}

// An error other than a taken port is returned as it is.
func TestExplainOther(t *testing.T) {
	err := errors.New("permission denied")
	if got := Explain(err, 80, "x"); got != err {
		t.Fatalf("%v", got)
	}
}
