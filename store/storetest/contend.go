package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
)

// ContendThread is the conversation Contend's processes take turns in.
const ContendThread = "default"

// The shape of Contend: how many turns each of two processes takes, of
// how many events, and the lease a killed holder leaves.
const (
	contendTurns = 12
	turnEvents   = 3
	heldTTL      = 2 * time.Second
	turnTTL      = 10 * time.Second
)

// Contend proves the lease holds across processes sharing one store, as
// turns on two machines would take it. A driver's tests run it from a
// test of its own, which must call Contend as its first thing:
//
//	func TestContend(t *testing.T) {
//		storetest.Contend(t, func(dir string) store.Conversations { return log.Open(dir) })
//	}
//
// First a process takes the lease, begins a turn (two events of three)
// and is killed with SIGKILL holding it: the lease outlives it, refusing
// another until it expires, and is then taken over. Then two processes
// (the test binary started again) each take contendTurns turns: take the
// lease (again while another holds it), read the next number, append a
// turn's three events, let the lease go. The conversation is the killed
// turn's two events and then whole turns, one at a time: each turn's
// events together and in order, no number written twice, none missing.
func Contend(t *testing.T, open func(dir string) store.Conversations) {
	switch childMode() {
	case modeHold:
		holdAndWait(open)
		return
	case modeContend:
		if err := takeTurns(open, os.Getenv(envDir), os.Getenv(envName)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	case "":
	default:
		return // a child of another of the test's processes
	}
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	dir := t.TempDir()
	takeOver(t, open, dir)
	const names = 2
	children := make([]*child, names)
	for i := range children {
		children[i] = startChild(t, modeContend, dir, fmt.Sprint("p", i))
	}
	// Both ready, then both go, so they contend from their first turn.
	for i, c := range children {
		select {
		case line := <-c.lines:
			if line != "ready" {
				t.Fatalf("process p%d said %q:\n%s", i, line, c.stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("process p%d not ready in 30s:\n%s", i, c.stderr.String())
		}
	}
	if err := os.WriteFile(filepath.Join(dir, goFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, c := range children {
		if err := c.wait(90 * time.Second); err != nil {
			t.Fatalf("process p%d: %v\n%s", i, err, c.stderr.String())
		}
	}
	ctx := context.Background()
	c := open(dir)
	defer closeStore(c)
	es, err := c.Read(ctx, ContendThread, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkTurns(t, es, names)
}

// takeOver starts a holder, kills it holding the lease mid-turn, and
// proves the lease refuses another until it expires, then is taken.
func takeOver(t *testing.T, open func(string) store.Conversations, dir string) {
	t.Helper()
	h := startChild(t, modeHold, dir, "killed")
	var expires time.Time
	select {
	case line, ok := <-h.lines:
		s, found := strings.CutPrefix(line, "held ")
		if !ok || !found {
			h.kill()
			t.Fatalf("holder said %q:\n%s", line, h.stderr.String())
		}
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		expires = time.Unix(0, ns)
	case <-time.After(30 * time.Second):
		h.kill()
		t.Fatalf("holder took no lease in 30s:\n%s", h.stderr.String())
	}
	h.kill()
	ctx := context.Background()
	c := open(dir)
	defer closeStore(c)
	_, err := c.Lease(ctx, ContendThread, "taker", turnTTL)
	if early := time.Now().Before(expires.Add(-100 * time.Millisecond)); early && !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease %v before a killed holder's expires: %v, want ErrLeaseHeld", time.Until(expires), err)
	} else if !early {
		t.Logf("the machine was too slow to see the killed holder's lease held: %v", err)
	}
	testwait.For(t, time.Until(expires.Add(5*time.Second)), "the killed holder's lease to expire, taken", func() bool {
		if err != nil && !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("lease after its holder was killed: %v", err)
		}
		if err == nil {
			return true
		}
		_, err = c.Lease(ctx, ContendThread, "taker", turnTTL)
		return err == nil
	})
	if now := time.Now(); now.Before(expires.Add(-time.Second)) {
		t.Fatalf("lease taken %v before the killed holder's expired", expires.Sub(now))
	}
	if err := c.Release(ctx, ContendThread, "taker"); err != nil {
		t.Fatal(err)
	}
}

// holdAndWait is the holder: it takes the lease, appends two events of a
// turn of three, says so, and waits to be killed.
func holdAndWait(open func(string) store.Conversations) {
	ppid, start := os.Getppid(), time.Now()
	ctx := context.Background()
	c := open(os.Getenv(envDir))
	name := os.Getenv(envName)
	l, err := c.Lease(ctx, ContendThread, name, heldTTL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for j := range turnEvents - 1 {
		if err := c.Append(ctx, ContendThread, TurnEvent(int64(j+1), name, 0, j)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	fmt.Fprintf(os.Stdout, "held %d\n", l.Expires.UnixNano())
	for !orphaned(ppid, start) {
		time.Sleep(10 * time.Millisecond)
	}
	os.Exit(0)
}

// TurnEvent is event j of turn k of name, as event seq.
func TurnEvent(seq int64, name string, k, j int) store.Event {
	return store.Event{
		Seq:  seq,
		Time: base.Add(time.Duration(seq) * time.Second),
		Kind: store.KindMessage,
		From: name,
		Text: fmt.Sprintf("%s turn %d event %d", name, k, j),
	}
}

// goFile, made in the store's folder, says the contending processes go.
const goFile = "go"

// takeTurns takes contendTurns turns as name, once its parent says go.
func takeTurns(open func(string) store.Conversations, dir, name string) error {
	ctx := context.Background()
	c := open(dir)
	defer closeStore(c)
	fmt.Fprintln(os.Stdout, "ready")
	deadline := time.Now().Add(60 * time.Second)
	if err := testwait.Err(60*time.Second, name+"'s go", func() bool {
		_, err := os.Stat(filepath.Join(dir, goFile))
		return err == nil
	}); err != nil {
		return err
	}
	for k := range contendTurns {
		for {
			_, err := c.Lease(ctx, ContendThread, name, turnTTL)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrLeaseHeld) {
				return fmt.Errorf("%s turn %d: %w", name, k, err)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s turn %d: no lease in 60s: %w", name, k, err)
			}
			time.Sleep(time.Millisecond)
		}
		next, err := store.Next(ctx, c, ContendThread)
		if err != nil {
			return fmt.Errorf("%s turn %d: %w", name, k, err)
		}
		for j := range turnEvents {
			if err := c.Append(ctx, ContendThread, TurnEvent(next+int64(j), name, k, j)); err != nil {
				return fmt.Errorf("%s turn %d holds the lease, yet: %w", name, k, err)
			}
		}
		if err := c.Release(ctx, ContendThread, name); err != nil {
			return fmt.Errorf("%s turn %d: %w", name, k, err)
		}
		// Between turns, as between messages: the other may take one.
		time.Sleep(time.Duration(2+2*(k%4)) * time.Millisecond)
	}
	return nil
}

// checkTurns fails t unless es is the killed holder's two events and
// then every turn of names processes whole, one at a time.
func checkTurns(t *testing.T, es []store.Event, names int) {
	t.Helper()
	want := int64(turnEvents - 1 + names*contendTurns*turnEvents)
	if int64(len(es)) != want {
		t.Fatalf("%d events (%s), want %d", len(es), seqs(es), want)
	}
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d at place %d: a number twice or missing", e.Seq, i+1)
		}
	}
	sameLines(t, "the killed turn", es[:turnEvents-1], []store.Event{TurnEvent(1, "killed", 0, 0), TurnEvent(2, "killed", 0, 1)})
	turns := map[string]int{}
	switches := 0
	for i := turnEvents - 1; i < len(es); i += turnEvents {
		name := es[i].From
		k := turns[name]
		var wantTurn []store.Event
		for j := range turnEvents {
			wantTurn = append(wantTurn, TurnEvent(int64(i+j+1), name, k, j))
		}
		sameLines(t, fmt.Sprintf("turn %d of %s at #%d", k, name, i+1), es[i:i+turnEvents], wantTurn)
		turns[name]++
		if i > turnEvents-1 && es[i-1].From != name {
			switches++
		}
	}
	for i := range names {
		if n := turns[fmt.Sprint("p", i)]; n != contendTurns {
			t.Fatalf("p%d took %d turns, want %d", i, n, contendTurns)
		}
	}
	t.Logf("%d turns, the lease passing between processes %d times", names*contendTurns, switches)
}
