// Package storetest is the one suite every conversations driver passes:
// each driver's tests call Run with a function that opens a fresh, empty
// store, and its benchmarks call Bench.
//
//	func TestDriver(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Conversations { return open(t) })
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/store"
)

// Run runs the suite. open returns a fresh, empty store for one agent
// each time it is called, and closes it with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Conversations) {
	tests := []struct {
		name string
		run  func(t *testing.T, c store.Conversations)
	}{
		{"AppendRead", testAppendRead},
		{"ReadFrom", testReadFrom},
		{"ReadUnknown", testReadUnknown},
		{"SeqTaken", testSeqTaken},
		{"FirstIsOne", testFirstIsOne},
		{"Threads", testThreads},
		{"BadThread", testBadThread},
		{"BigEvent", testBigEvent},
		{"Latest", testLatest},
		{"Race", testRace},
		{"Lease", testLease},
		{"LeaseExpiry", testLeaseExpiry},
		{"Release", testRelease},
		{"LeaseRead", testLeaseRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, open(t))
		})
	}
}

// appendAll appends es to thread, failing t on the first error.
func appendAll(t testing.TB, c store.Conversations, thread string, es []store.Event) {
	t.Helper()
	for _, e := range es {
		if err := c.Append(context.Background(), thread, e); err != nil {
			t.Fatalf("append %s#%d: %v", thread, e.Seq, err)
		}
	}
}

// read reads thread from from, failing t on an error.
func read(t testing.TB, c store.Conversations, thread string, from int64) []store.Event {
	t.Helper()
	got, err := c.Read(context.Background(), thread, from)
	if err != nil {
		t.Fatalf("read %s from %d: %v", thread, from, err)
	}
	return got
}

func testAppendRead(t *testing.T, c store.Conversations) {
	want := Events(13, "a")
	appendAll(t, c, "telegram:42", want)
	Same(t, "read from 1", read(t, c, "telegram:42", 1), want)
	// A second read sees the same: reading changes nothing.
	Same(t, "read again", read(t, c, "telegram:42", 1), want)
	// From 0 or below is from the first.
	Same(t, "read from 0", read(t, c, "telegram:42", 0), want)
}

func testReadFrom(t *testing.T, c store.Conversations) {
	want := Events(20, "a")
	appendAll(t, c, "default", want)
	for _, from := range []int64{2, 11, 20} {
		Same(t, fmt.Sprintf("read from %d", from), read(t, c, "default", from), want[from-1:])
	}
	if got := read(t, c, "default", 21); len(got) != 0 {
		t.Fatalf("read from past the last: %d events, want none", len(got))
	}
	if got := read(t, c, "default", 1000); len(got) != 0 {
		t.Fatalf("read from far past the last: %d events, want none", len(got))
	}
}

func testReadUnknown(t *testing.T, c store.Conversations) {
	appendAll(t, c, "telegram:42", Events(2, "a"))
	got, err := c.Read(context.Background(), "telegram:43", 1)
	if err != nil {
		t.Fatalf("read of a thread with no events: %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("read of a thread with no events: %d events", len(got))
	}
	got, err = store.Latest(context.Background(), c, "telegram:43", 32)
	if err != nil || len(got) != 0 {
		t.Fatalf("latest of a thread with no events: %d events, %v", len(got), err)
	}
	next, err := store.Next(context.Background(), c, "telegram:43")
	if err != nil || next != 1 {
		t.Fatalf("next of a thread with no events: %d, %v; want 1", next, err)
	}
}

func testSeqTaken(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	want := Events(3, "a")
	appendAll(t, c, "default", want)
	for _, tc := range []struct {
		name string
		seq  int64
	}{
		{"the last again", 3},
		{"one in the middle", 2},
		{"the first", 1},
		{"a gap", 5},
		{"far ahead", 1000},
	} {
		err := c.Append(ctx, "default", Event(tc.seq, "b"))
		if !errors.Is(err, store.ErrSeqTaken) {
			t.Errorf("append %s (#%d): %v, want ErrSeqTaken", tc.name, tc.seq, err)
		}
	}
	for _, seq := range []int64{0, -1} {
		e := Event(1, "b")
		e.Seq = seq
		if err := c.Append(ctx, "default", e); err == nil {
			t.Errorf("append #%d: no error", seq)
		}
	}
	// Nothing refused was written, and what was is unchanged.
	Same(t, "after refusals", read(t, c, "default", 1), want)
	// The next number is still free.
	next := Event(4, "a")
	if err := c.Append(ctx, "default", next); err != nil {
		t.Fatalf("append the next after refusals: %v", err)
	}
	Same(t, "after the next", read(t, c, "default", 1), append(want, next))
}

func testFirstIsOne(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	for _, seq := range []int64{2, 7} {
		if err := c.Append(ctx, "default", Event(seq, "a")); !errors.Is(err, store.ErrSeqTaken) {
			t.Errorf("append #%d first: %v, want ErrSeqTaken", seq, err)
		}
	}
	if got := read(t, c, "default", 1); len(got) != 0 {
		t.Fatalf("after refused firsts: %d events, want none", len(got))
	}
	appendAll(t, c, "default", Events(1, "a"))
	Same(t, "after the first", read(t, c, "default", 1), Events(1, "a"))
}

// Threads is a thread id of each form, whose events a store keeps apart.
var Threads = []string{"telegram:42", "slack:C0123ABC.1700000000.000100", "link:notes", "default"}

func testThreads(t *testing.T, c store.Conversations) {
	want := map[string][]store.Event{}
	for i, th := range Threads {
		want[th] = Events(3+i, th)
	}
	// Interleaved, so a driver that mixes threads shows it.
	for seq := 1; seq <= 3+len(Threads); seq++ {
		for _, th := range Threads {
			if seq <= len(want[th]) {
				appendAll(t, c, th, want[th][seq-1:seq])
			}
		}
	}
	for _, th := range Threads {
		Same(t, "thread "+th, read(t, c, th, 1), want[th])
		latest, err := store.Latest(context.Background(), c, th, 2)
		if err != nil {
			t.Fatalf("latest %s: %v", th, err)
		}
		Same(t, "latest of "+th, latest, want[th][len(want[th])-2:])
	}
	// A thread like one written is still its own.
	if got := read(t, c, "telegram:4", 1); len(got) != 0 {
		t.Fatalf("telegram:4 has %d events of another thread", len(got))
	}
}

// BadThreads are ids every store refuses.
var BadThreads = []string{"", "../escape", "telegram:../../x", "telegram:abc", "nope:1", "link:A", "default/..", "link:a/b", "telegram:1\x00"}

func testBadThread(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	for _, th := range BadThreads {
		if err := c.Append(ctx, th, Event(1, "a")); err == nil {
			t.Errorf("append to %q: no error", th)
		}
		if _, err := c.Read(ctx, th, 1); err == nil {
			t.Errorf("read of %q: no error", th)
		}
		if _, err := c.Lease(ctx, th, "h1", leaseTTL); err == nil {
			t.Errorf("lease of %q: no error", th)
		}
	}
}

func testBigEvent(t *testing.T, c store.Conversations) {
	want := Events(3, "a")
	// A megabyte of text with what JSON escapes in it, and an attachment.
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("line \"quoted\" \\ back\tslash ünï 🙂\n")
	}
	want[1].Text = b.String()
	want[0].Parts[0].Data = strings.Repeat("QUJD", 1<<18)
	appendAll(t, c, "default", want)
	Same(t, "big events", read(t, c, "default", 1), want)
	latest, err := store.Latest(context.Background(), c, "default", 2)
	if err != nil {
		t.Fatal(err)
	}
	Same(t, "latest big events", latest, want[1:])
}

// hidden hides a driver's optional capabilities, so store.Latest takes
// its general path.
type hidden struct{ store.Conversations }

func testLatest(t *testing.T, c store.Conversations) {
	ctx := context.Background()
	want := Events(40, "a")
	appendAll(t, c, "default", want)
	for _, impl := range []struct {
		name string
		c    store.Conversations
	}{{"driver", c}, {"general", hidden{c}}} {
		for _, n := range []int{0, 1, 3, 32, 40, 100} {
			got, err := store.Latest(ctx, impl.c, "default", n)
			if err != nil {
				t.Fatalf("%s latest %d: %v", impl.name, n, err)
			}
			Same(t, fmt.Sprintf("%s latest %d", impl.name, n), got, want[max(0, 40-n):])
		}
		next, err := store.Next(ctx, impl.c, "default")
		if err != nil || next != 41 {
			t.Fatalf("%s next: %d, %v; want 41", impl.name, next, err)
		}
	}
}

func testRace(t *testing.T, c store.Conversations) {
	const writers = 16
	ctx := context.Background()
	var want []store.Event
	// Race for the first event, then for the ones after it.
	for seq := int64(1); seq <= 3; seq++ {
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			errs   = make([]error, writers)
			events = make([]store.Event, writers)
		)
		for w := range writers {
			events[w] = Event(seq, fmt.Sprintf("writer %d", w))
			wg.Go(func() {
				<-start
				errs[w] = c.Append(ctx, "default", events[w])
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("#%d: writers %d and %d both appended", seq, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, store.ErrSeqTaken):
				t.Fatalf("#%d: writer %d: %v, want ErrSeqTaken", seq, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("#%d: no writer appended", seq)
		}
		want = append(want, events[winner])
		Same(t, fmt.Sprintf("after the race for #%d", seq), read(t, c, "default", 1), want)
	}
}
