package storetest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// Sizes are the conversation lengths the benchmarks read at, so a driver's
// figures compare with another's, and a read that grows with the
// conversation shows as a ratio.
var Sizes = []int{10_000, 100_000}

// LatestN is how many of the latest events a turn reads for the window's
// checkpoint.
const LatestN = 32

// Benchmarks are a driver's benchmarks: appends, and reading the latest
// LatestN events of conversations of each of Sizes.
type Benchmarks struct {
	// Open returns a fresh, empty store, closed with tb.Cleanup.
	Open func(tb testing.TB) store.Conversations
	// Fill, if set, writes events (numbered from 1) as thread's whole
	// conversation by a quicker way than one Append each, such as one
	// transaction or one file write; what it writes must read as if
	// appended. Unset, the events are appended one by one.
	Fill func(tb testing.TB, c store.Conversations, thread string, events []store.Event)
	// Sizes overrides the package's Sizes.
	Sizes []int
}

// Bench runs the benchmarks with a store open gives and the events
// appended one by one.
func Bench(b *testing.B, open func(tb testing.TB) store.Conversations) {
	Benchmarks{Open: open}.Run(b)
}

// BenchEvent is event seq of a benchmark's conversation: a message or an
// answer of about 500 bytes, as a chat's are.
func BenchEvent(seq int64) store.Event {
	e := store.Event{Seq: seq, Time: base.Add(time.Duration(seq) * time.Second), Kind: store.KindMessage}
	e.Text = fmt.Sprintf("message %d: ", seq) + strings.Repeat("the quick brown fox jumps over the lazy dog. ", 10)
	if seq%2 == 0 {
		e.Kind = store.KindAnswer
		e.Model = "anthropic/claude-opus-5-5"
		e.Provider = "anthropic"
		e.ResponseID = fmt.Sprintf("msg_%08d", seq)
		e.Usage = &store.Usage{In: 1000 + seq, Out: 80}
		e.LatencyMS = 900
	}
	return e
}

// BenchEvents is events 1 to n of a benchmark's conversation.
func BenchEvents(n int) []store.Event {
	es := make([]store.Event, n)
	for i := range es {
		es[i] = BenchEvent(int64(i + 1))
	}
	return es
}

// Run runs the benchmarks as sub-benchmarks of b: Append, then
// Latest32/<size> for each size. Each conversation is built once per run,
// outside the timing.
func (bm Benchmarks) Run(b *testing.B) {
	b.Run("Append", bm.benchAppend)
	sizes := bm.Sizes
	if sizes == nil {
		sizes = Sizes
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("Latest%d/%dk", LatestN, n/1000), func(b *testing.B) { bm.benchLatest(b, n) })
	}
}

// benchAppend appends to one conversation, each append durable before the
// next, as a turn's are.
func (bm Benchmarks) benchAppend(b *testing.B) {
	c := bm.Open(b)
	ctx := context.Background()
	seq := int64(0)
	start := time.Now()
	for b.Loop() {
		seq++
		if err := c.Append(ctx, "default", BenchEvent(seq)); err != nil {
			b.Fatalf("append #%d: %v", seq, err)
		}
	}
	b.ReportMetric(float64(seq)/time.Since(start).Seconds(), "appends/s")
}

// benchLatest reads the latest LatestN events of a conversation of n.
func (bm Benchmarks) benchLatest(b *testing.B, n int) {
	c := bm.Open(b)
	ctx := context.Background()
	es := BenchEvents(n)
	if bm.Fill != nil {
		bm.Fill(b, c, "default", es)
	} else {
		appendAll(b, c, "default", es)
	}
	want := slices.Clone(es[n-LatestN:])
	// Let the conversation's events go, so the reads' timing isn't that
	// of collecting a large heap.
	es = nil
	runtime.GC()
	// Checked once, outside the timing: the benchmark reads what it says.
	got, err := store.Latest(ctx, c, "default", LatestN)
	if err != nil {
		b.Fatal(err)
	}
	Same(b, "latest", got, want)
	for b.Loop() {
		got, err := store.Latest(ctx, c, "default", LatestN)
		if err != nil || len(got) != LatestN {
			b.Fatalf("latest %d: %d events, %v", LatestN, len(got), err)
		}
	}
}
