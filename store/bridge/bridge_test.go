package bridge_test

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

var testKey = []byte("k3y-of-the-agent-main-0123456789")

// served is a bridge serving a log driver, and a client dialed to it.
type served struct {
	client *bridge.Client
	driver *log.Driver
	cfg    bridge.Config // the client's, to dial others
}

// serve starts a bridge over a log driver of a fresh folder, on a unix
// socket or a loopback port, and dials it. Both end with tb.
func serve(tb testing.TB, network string) *served {
	tb.Helper()
	return serveDir(tb, network, tb.TempDir())
}

// serveDir is serve with the log driver's folder dir.
func serveDir(tb testing.TB, network, dir string) *served {
	tb.Helper()
	d := log.Open(dir)
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: d, Key: testKey})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := listen(tb, network, srv)
	c, err := bridge.Dial(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &served{client: c, driver: d, cfg: cfg}
}

// listen serves srv on a fresh unix socket or loopback port until tb
// ends, and gives a client's config for it.
func listen(tb testing.TB, network string, srv *bridge.Server) bridge.Config {
	tb.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = socketPath(tb)
	}
	ln, err := bridge.Listen(network, addr)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	return bridge.Config{Network: network, Address: ln.Addr().String(), Key: testKey}
}

// socketPath is a unix socket's path short enough for the system's
// limit (108 bytes), which a test's temporary folder may pass.
func socketPath(tb testing.TB) string {
	p := filepath.Join(tb.TempDir(), "b.sock")
	if len(p) < 100 {
		return p
	}
	dir, err := mkdirShort()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { removeAll(dir) })
	return filepath.Join(dir, "b.sock")
}

func TestSuiteUnix(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return serve(t, "unix").client })
}

func TestSuiteLoopback(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return serve(t, "tcp").client })
}

// An append sent again after its answer was lost succeeds when the event
// there is the one sent, byte for byte, and is refused when it isn't.
func TestAppendAgain(t *testing.T) {
	ctx := context.Background()
	s := serve(t, "unix")
	es := storetest.Events(3, "a")
	for _, e := range es {
		if err := s.client.Append(ctx, "telegram:42", e); err != nil {
			t.Fatal(err)
		}
	}
	// The last, and one before it, sent again: each lands once.
	for _, e := range []store.Event{es[2], es[1]} {
		if err := s.client.Append(ctx, "telegram:42", e); err != nil {
			t.Fatalf("append #%d again, the same: %v", e.Seq, err)
		}
	}
	// The same instant in another zone is the same event: the log keeps
	// it in UTC.
	again := es[2]
	again.Time = again.Time.In(time.FixedZone("CET", 3600))
	if err := s.client.Append(ctx, "telegram:42", again); err != nil {
		t.Fatalf("append #3 again, its time in another zone: %v", err)
	}
	other := storetest.Event(3, "b")
	if err := s.client.Append(ctx, "telegram:42", other); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #3 again, another event: %v, want ErrSeqTaken", err)
	}
	// A gap stays refused.
	if err := s.client.Append(ctx, "telegram:42", storetest.Event(5, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #5 after #3: %v, want ErrSeqTaken", err)
	}
	got, err := s.driver.Read(ctx, "telegram:42", 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "after appends sent again", got, es)
}

// A refusal of the driver's crosses with its sentinel.
func TestErrorsCross(t *testing.T) {
	ctx := context.Background()
	s := serve(t, "tcp")
	if err := s.client.Append(ctx, "default", storetest.Event(2, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #2 first: %v, want ErrSeqTaken", err)
	}
	if _, err := s.client.Lease(ctx, "default", "h1", time.Minute); err != nil {
		t.Fatal(err)
	}
	_, err := s.client.Lease(ctx, "default", "h2", time.Minute)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease held by another: %v, want ErrLeaseHeld", err)
	}
	if errors.Is(err, store.ErrSeqTaken) || errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("lease held by another is another sentinel too: %v", err)
	}
	// Corrupt bytes the driver reads are ErrCorrupt here too.
	dir, err := s.driver.Folder("telegram:7")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, log.EventsFile), "{\"seq\":1,\"kind\":\"message\"}\nnot an event\n")
	if _, err := s.client.Read(ctx, "telegram:7", 1); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("read of a corrupt log: %v, want ErrCorrupt", err)
	}
	if _, err := s.client.Latest(ctx, "telegram:7", 2); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("latest of a corrupt log: %v, want ErrCorrupt", err)
	}
}

// A server that never answers gives the client's error once its timeout
// has passed, not the caller's much later one.
func TestTimeout(t *testing.T) {
	path := socketPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Accepts, reads, and never answers.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	const timeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = bridge.Dial(ctx, bridge.Config{Network: "unix", Address: path, Key: testKey, Timeout: timeout})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial of a bridge that hangs: %v, want the deadline's error", err)
	}
	if took < timeout || took > timeout+5*time.Second {
		t.Fatalf("dial of a bridge that hangs gave up after %v, want about %v", took, timeout)
	}

	// A bridge that answered the dial and then hangs on a call.
	hang := make(chan struct{})
	defer close(hang)
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: stuck{log.Open(t.TempDir()), hang}, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := listen(t, "unix", srv)
	cfg.Timeout = timeout
	c, err := bridge.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start = time.Now()
	err = c.Append(ctx, "default", storetest.Event(1, "a"))
	took = time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append to a bridge that hangs: %v, want the deadline's error", err)
	}
	if took < timeout || took > timeout+5*time.Second {
		t.Fatalf("append to a bridge that hangs gave up after %v, want about %v", took, timeout)
	}
	// The caller's own deadline, if sooner, stops it first.
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	start = time.Now()
	if _, err := c.Read(short, "default", 1); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) >= timeout {
		t.Fatalf("read with a sooner deadline: %v after %v", err, time.Since(start))
	}
}

// stuck is a driver whose calls wait until hang is closed or their
// context ends.
type stuck struct {
	*log.Driver
	hang chan struct{}
}

func (s stuck) Append(ctx context.Context, thread string, e store.Event) error {
	select {
	case <-s.hang:
	case <-ctx.Done():
	}
	return s.Driver.Append(ctx, thread, e)
}

func (s stuck) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	select {
	case <-s.hang:
	case <-ctx.Done():
	}
	return s.Driver.Read(ctx, thread, from)
}

// Listen refuses what isn't loopback, and a socket a bridge answers on.
func TestListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost:0", "example.com:80", "127.0.0.1"} {
		if ln, err := bridge.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Errorf("listen on %q: no error", addr)
		}
	}
	if ln, err := bridge.Listen("udp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("listen on udp: no error")
	}
	path := socketPath(t)
	ln, err := bridge.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if ln2, err := bridge.Listen("unix", path); err == nil {
		ln2.Close()
		t.Fatal("a second bridge on a socket one answers on: no error")
	}
	info, err := lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("socket's mode %v, want 0600", perm)
	}
	// A socket left by a bridge that ended is replaced. Go removes a
	// listener's socket on Close, so leave one as a killed process would.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln, err = bridge.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen where a bridge ended: %v", err)
	}
	ln.Close()
	// A file that isn't a socket is left alone.
	plain := filepath.Join(t.TempDir(), "plain")
	writeFile(t, plain, "mine")
	if ln, err := bridge.Listen("unix", plain); err == nil {
		ln.Close()
		t.Fatal("listen over a plain file: no error")
	}
}

// A peer that sends a call's headers and then too little of its body, or
// sends nothing more after a call, is let go within the server's bounds
// (ReadTimeout, IdleTimeout): no proof is checked before the body, so an
// unproved peer held its connection, and a goroutine, for as long as it
// liked.
func TestServerBoundsSlowPeer(t *testing.T) {
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: log.Open(t.TempDir()), Key: testKey, ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := listen(t, "tcp", srv)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", cfg.Address)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(20 * time.Second)) // the test's own bound, far past the server's
		return c
	}
	// ended reads c to its end, giving what it read and whether the
	// server ended it (not the test's own deadline).
	ended := func(c net.Conn) (string, bool) {
		b, err := io.ReadAll(c)
		var ne net.Error
		return string(b), !(errors.As(err, &ne) && ne.Timeout())
	}

	slow := dial()
	if _, err := io.WriteString(slow, "POST /v1/ping HTTP/1.1\r\nHost: store-bridge\r\nContent-Length: 100\r\n\r\n{\"a\":"); err != nil {
		t.Fatal(err)
	}
	if got, ok := ended(slow); !ok || !strings.Contains(got, "408") || !strings.Contains(got, "didn't arrive within 200ms") {
		t.Fatalf("a body that never came: the connection was held (ended by the server: %v): %q", ok, got)
	}

	idle := dial()
	if _, err := io.WriteString(idle, "POST /v1/ping HTTP/1.1\r\nHost: store-bridge\r\nContent-Length: 0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if got, ok := ended(idle); !ok || !strings.Contains(got, "401") {
		t.Fatalf("an idle connection after a call was held (ended by the server: %v): %q", ok, got)
	}

	// A proved call still goes through, the deadline cleared for it.
	c, err := bridge.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Append(context.Background(), "telegram:1", store.Event{Seq: 1, Kind: store.KindMessage, Text: "hi", Time: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
}
