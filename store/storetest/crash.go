package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// CrashThread is the conversation Crash's writers append to.
const CrashThread = "telegram:42"

// Crashes kills a writer in the middle of its appends, many times over,
// and after each kill proves what it had been told was written is there.
// A driver's tests run it with Crash, or set its fields:
//
//	func TestCrash(t *testing.T) {
//		storetest.Crash(t, func(dir string) store.Conversations { return log.Open(dir) })
//	}
//
// The writer is the test binary started again (os.Args[0]) to run only
// the calling test, which must call Crash as its first thing: in the
// writer, Crash appends CrashEvent(n) for n from the store's next, one
// after another, and prints "ack n" on its stdout only once Append has
// returned nil for it. The parent waits for a number of acks it chooses
// at random, waits a random moment more (mostly inside the next append),
// and kills the writer with SIGKILL. Then, in its own process, it opens
// the store again and proves: every acknowledged event is there once and
// byte for byte as written, the numbers run from 1 with none twice (an
// event whose append was cut short is there whole or not at all), the
// conversation reads to its end, and the next append works.
type Crashes struct {
	// Open opens the store in dir, a folder the test made; Crash closes
	// it (store.Closer) when done with it.
	Open func(dir string) store.Conversations
	// Kills is how many times the writer is killed: 25 if zero.
	Kills int
	// Budget bounds the whole: kills stop once it has passed. 15s if zero.
	Budget time.Duration
	// FoldEvery, if set, aims half of the kills at the append after a
	// multiple of it: a compact driver's fold, which comes every so many.
	FoldEvery int64
}

// Crash runs Crashes{Open: open} on t.
func Crash(t *testing.T, open func(dir string) store.Conversations) {
	Crashes{Open: open}.Run(t)
}

// CrashEvent is event seq of Crash's conversation: of every kind in turn
// (as Event makes them), with a text of a length from a few bytes to
// some kilobytes, so appends take differing times and a fold's frames
// differ in size.
func CrashEvent(seq int64) store.Event {
	e := Event(seq, "crash")
	e.Text += strings.Repeat("0123456789abcdef", int(seq*7919%257))
	return e
}

// Run runs the crashes on t.
func (c Crashes) Run(t *testing.T) {
	switch childMode() {
	case modeCrash:
		crashWriter(c.Open)
		return
	case "":
	default:
		return // a child of another of the test's processes
	}
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	kills, budget := c.Kills, c.Budget
	if kills == 0 {
		kills = 25
	}
	if budget == 0 {
		budget = 15 * time.Second
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	deadline := time.Now().Add(budget)
	var acked int64 // the last number acknowledged, by a writer or by us
	var unacked int // kills after which an event not acknowledged was there
	var done, aimed int
	for done < kills && time.Now().Before(deadline) {
		target := acked + 1 + rng.Int64N(24)
		if c.FoldEvery > 0 && rng.IntN(2) == 0 {
			target = (acked/c.FoldEvery + 1) * c.FoldEvery
			aimed++
		}
		w := startChild(t, modeCrash, dir, "writer")
		last := crashUntil(t, w, target, acked)
		// A random moment more: mostly inside the next append.
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		w.kill()
		for _, line := range w.rest {
			last = max(last, parseAck(t, line, w))
		}
		acked = max(acked, last)
		n := crashCheck(t, c.Open, dir, acked, done+1)
		if n > acked {
			unacked++
		}
		acked = n + 1 // crashCheck appended the next
		done++
	}
	if done == 0 {
		t.Fatal("no writer was killed within the budget")
	}
	t.Logf("%d kills (%d aimed at a fold), %d events, %d kills left an event written but not acknowledged", done, aimed, acked, unacked)
}

// crashUntil reads the writer's acks until it acknowledges target, and
// gives the last; it fails t if the writer ends or is slow.
func crashUntil(t *testing.T, w *child, target, acked int64) int64 {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	last := acked
	for last < target {
		select {
		case line, ok := <-w.lines:
			if !ok {
				<-w.exited
				t.Fatalf("writer ended by itself (%v) after #%d:\n%s", w.err, last, w.stderr.String())
			}
			last = max(last, parseAck(t, line, w))
		case <-timer.C:
			w.kill()
			t.Fatalf("writer acknowledged #%d in 20s, not #%d:\n%s", last, target, w.stderr.String())
		}
	}
	return last
}

// parseAck reads an "ack n" line of the writer's; the test binary's own
// lines are passed over.
func parseAck(t *testing.T, line string, w *child) int64 {
	t.Helper()
	s, ok := strings.CutPrefix(line, "ack ")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("writer said %q:\n%s", line, w.stderr.String())
	}
	return n
}

// crashCheck opens the store after a kill and proves the conversation
// holds every acknowledged event once, as written, with nothing after it
// but whole events, reads to its end, and takes the next append. It
// gives the number of events before that append.
func crashCheck(t *testing.T, open func(string) store.Conversations, dir string, acked int64, kill int) int64 {
	t.Helper()
	ctx := context.Background()
	c := open(dir)
	defer closeStore(c)
	es, err := c.Read(ctx, CrashThread, 1)
	if err != nil {
		t.Fatalf("after kill %d: read: %v", kill, err)
	}
	n := int64(len(es))
	if n < acked {
		t.Fatalf("after kill %d: %d events, but #%d was acknowledged", kill, n, acked)
	}
	if n > acked+1 {
		// One append at a time: only the one cut short may be there
		// unacknowledged.
		t.Fatalf("after kill %d: %d events, #%d the last acknowledged", kill, n, acked)
	}
	want := make([]store.Event, n)
	for i := range want {
		want[i] = CrashEvent(int64(i + 1))
	}
	sameLines(t, fmt.Sprintf("after kill %d", kill), es, want)
	latest, err := store.Latest(ctx, c, CrashThread, 3)
	if err != nil {
		t.Fatalf("after kill %d: latest: %v", kill, err)
	}
	sameLines(t, fmt.Sprintf("latest after kill %d", kill), latest, want[max(0, n-3):])
	if err := c.Append(ctx, CrashThread, CrashEvent(n+1)); err != nil {
		t.Fatalf("after kill %d: append #%d: %v", kill, n+1, err)
	}
	return n
}

// crashWriter is the writer: it appends the next events until killed,
// saying each once it is written.
func crashWriter(open func(string) store.Conversations) {
	ppid, start := os.Getppid(), time.Now()
	ctx := context.Background()
	c := open(os.Getenv(envDir))
	next, err := store.Next(ctx, c, CrashThread)
	if err != nil {
		fmt.Fprintf(os.Stderr, "next: %v\n", err)
		os.Exit(3)
	}
	for ; !orphaned(ppid, start); next++ {
		if err := c.Append(ctx, CrashThread, CrashEvent(next)); err != nil {
			fmt.Fprintf(os.Stderr, "append #%d: %v\n", next, err)
			os.Exit(3)
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", next)
	}
	os.Exit(0)
}
