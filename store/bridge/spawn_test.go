//go:build unix

package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/log"
)

// The child the tests start is this test binary again, serving a log
// driver behind a bridge as a driver's plugin would: $BRIDGE_CHILD_DIR is
// the log's folder, $BRIDGE_CHILD_SOCKET the socket, the key on stdin.
// $BRIDGE_CHILD_FAIL makes it say so on stderr and exit 3 instead.
func TestMain(m *testing.M) {
	if msg := os.Getenv("BRIDGE_CHILD_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if dir := os.Getenv("BRIDGE_CHILD_DIR"); dir != "" {
		if err := runChild(dir, os.Getenv("BRIDGE_CHILD_SOCKET")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(dir, socket string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	key, err := contract.ParseKey(b)
	if err != nil {
		return err
	}
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: log.Open(dir), Key: key})
	if err != nil {
		return err
	}
	ln, err := bridge.Listen("unix", socket)
	if err != nil {
		return err
	}
	fmt.Println("serving log on unix:" + socket)
	return srv.Serve(ctx, ln)
}

// childConfig starts this test binary as a bridge over a log in dir.
func childConfig(t *testing.T, dir string, env ...string) bridge.ChildConfig {
	t.Helper()
	sockDir, err := mkdirShort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(sockDir) })
	socket := filepath.Join(sockDir, "b.sock")
	return bridge.ChildConfig{
		Path:    os.Args[0],
		Env:     append(os.Environ(), append([]string{"BRIDGE_CHILD_DIR=" + dir, "BRIDGE_CHILD_SOCKET=" + socket}, env...)...),
		Socket:  socket,
		Key:     testKey,
		Backoff: 20 * time.Millisecond,
	}
}

// gone says whether no process pid runs (the child was reaped).
func gone(pid int) bool {
	return syscall.Kill(pid, 0) != nil
}

// A child is started at the first call, not before; killed, it is started
// again at the next call, which is answered; what it wrote stays; Close
// stops it, leaving no process, and refuses calls after.
func TestChildStartsAgainAndStops(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	c, err := bridge.NewChild(childConfig(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if pid := c.Pid(); pid != 0 {
		t.Fatalf("a child runs (%d) before any call", pid)
	}
	const thread = "telegram:42"
	ev := func(seq int64, text string) store.Event {
		return store.Event{Seq: seq, Kind: "message", Time: time.Now().UTC(), Text: text}
	}
	if err := c.Append(ctx, thread, ev(1, "one")); err != nil {
		t.Fatal(err)
	}
	first := c.Pid()
	if first == 0 {
		t.Fatal("no child runs after a call")
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The next call finds it dead, whether or not it has been reaped yet.
	if err := c.Append(ctx, thread, ev(2, "two")); err != nil {
		t.Fatalf("append after the child was killed: %v", err)
	}
	second := c.Pid()
	if second == 0 || second == first {
		t.Fatalf("the child wasn't started again: pid %d, before %d", second, first)
	}
	es, err := c.Latest(ctx, thread, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Text != "one" || es[1].Text != "two" {
		t.Fatalf("events through the child: %+v", es)
	}
	if _, err := c.Lease(ctx, thread, "h1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lease(ctx, thread, "h2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("another's lease through the child: %v, want ErrLeaseHeld", err)
	}
	if err := c.Release(ctx, thread, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(ctx, thread, ev(2, "again")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("a number taken, through the child: %v, want ErrSeqTaken", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(second) {
		t.Fatalf("the child %d runs after Close", second)
	}
	if _, err := c.Read(ctx, thread, 1); err == nil {
		t.Fatal("a call after Close was answered")
	}
	// The events are the log's, on disk.
	got, err := log.Open(dir).Read(ctx, thread, 1)
	if err != nil || len(got) != 2 {
		t.Fatalf("the log holds %d events (%v), want 2", len(got), err)
	}
}

// A child kept (Keep) runs from then on, with no call: killed, it is
// started again by itself, and answers; Close stops it for good.
func TestChildKept(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	c, err := bridge.NewChild(childConfig(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	first := c.Pid()
	if first == 0 {
		t.Fatal("no child runs after Keep")
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the kept child started again", func() bool {
		pid := c.Pid()
		return pid != 0 && pid != first
	})
	second := c.Pid()
	if err := c.Append(ctx, "telegram:1", store.Event{Seq: 1, Kind: "message", Time: time.Now().UTC(), Text: "one"}); err != nil {
		t.Fatalf("a call to the child started again: %v", err)
	}
	if c.Pid() != second {
		t.Fatalf("the call started another child: %d, want %d", c.Pid(), second)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(second) {
		t.Fatalf("the kept child %d runs after Close", second)
	}
}

// A child that can't start says why: the program not found names it; one
// that ends before it listens gives what it said; the call after waits
// out the backoff.
func TestChildStartFails(t *testing.T) {
	ctx := t.Context()
	cfg := childConfig(t, t.TempDir())
	cfg.Path = filepath.Join(t.TempDir(), "no-such-lnk")
	c, err := bridge.NewChild(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(ctx, "telegram:1", 1); err == nil || !strings.Contains(err.Error(), "no-such-lnk") {
		t.Fatalf("a program not there: %v", err)
	}
	cfg = childConfig(t, t.TempDir(), "BRIDGE_CHILD_FAIL=no driver \"nosql\"")
	cfg.Backoff = 300 * time.Millisecond
	c, err = bridge.NewChild(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Read(ctx, "telegram:1", 1)
	if err == nil || !strings.Contains(err.Error(), `no driver "nosql"`) || !strings.Contains(err.Error(), "ended before it listened") {
		t.Fatalf("a child that ends at once: %v", err)
	}
	start := time.Now()
	if _, err := c.Read(ctx, "telegram:1", 1); err == nil {
		t.Fatal("the second start of a failing child was answered")
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("the second start came %v after the first failed, under its backoff", d)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Read(short, "telegram:1", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose context ends during the backoff: %v", err)
	}
}

// The config is checked before anything starts.
func TestChildConfigRefused(t *testing.T) {
	for name, cfg := range map[string]bridge.ChildConfig{
		"no program": {Socket: "/tmp/x.sock", Key: testKey},
		"no socket":  {Path: "lnk", Key: testKey},
		"no key":     {Path: "lnk", Socket: "/tmp/x.sock"},
		"negative":   {Path: "lnk", Socket: "/tmp/x.sock", Key: testKey, Backoff: -1},
	} {
		if _, err := bridge.NewChild(cfg); err == nil {
			t.Errorf("%s: made", name)
		}
	}
}
