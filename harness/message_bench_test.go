package harness_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// benchTurnsPerThread is how many messages a conversation of
// BenchmarkMessage gets before the next begins, so each turn reads a
// conversation of about the same length however many the run sends.
const benchTurnsPerThread = 32

// BenchmarkMessage is the per-message overhead of Link Harness as a bridge
// sees it, with a model that answers at once: from the WebSocket's open
// (the proof, then the upgrade) to the prompt answered, its message and
// answer kept in a log conversation. It reports the median and the 99th
// percentile of the messages' times (p50-ms, p99-ms) beside the mean,
// and the allocations of both ends, client and harness, in this process.
func BenchmarkMessage(b *testing.B) { benchMessages(b, benchTurnsPerThread) }

// BenchmarkMessageCold is BenchmarkMessage with each message the first of
// its conversation: lnk measure's "per message, cold".
func BenchmarkMessageCold(b *testing.B) { benchMessages(b, 1) }

// benchMessages times b.N messages, perThread to a conversation.
func benchMessages(b *testing.B, perThread int) {
	r := newBenchRig(b)
	ctx := context.Background()
	block := []acp.Block{{Type: "text", Text: "hello"}}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		thread := "link:bench-" + strconv.Itoa(i/perThread)
		start := time.Now()
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.URL, Key: r.Key, Agent: testAgent})
		if err != nil {
			b.Fatal(err)
		}
		c := acp.NewClient(ctx, conn, nil)
		if _, err := c.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		if err := c.Resume(ctx, thread); err != nil {
			b.Fatal(err)
		}
		res, err := c.Prompt(ctx, thread, block, nil)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		if res.StopReason != acp.StopEndTurn || res.Steered() {
			b.Fatalf("answered %+v", res)
		}
		c.Close()
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(ms(percentile(times, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(times, 99)), "p99-ms")
}

// percentile is the pth percentile of sorted times, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestPercentile(t *testing.T) {
	var ts []time.Duration
	for i := 1; i <= 200; i++ {
		ts = append(ts, time.Duration(i))
	}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 100}, {99, 198}, {100, 200}, {1, 2}} {
		if got := percentile(ts, c.p); got != c.want {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 || percentile(ts[:1], 99) != 1 {
		t.Error("short lists")
	}
}
