//go:build unix

package harness_test

import (
	"context"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model/scripted"
)

// promptTurnsPerThread is how many messages a conversation of
// BenchmarkPrompt gets before the next begins, so each turn reads a
// conversation of about the same length however many the run sends.
const promptTurnsPerThread = 32

// BenchmarkPrompt is the harness's own part of a message, with no
// connection: Prompt called directly with a model that answers at once,
// its message and answer kept in a log conversation (each synced), the
// lease taken and let go. Beside the mean it reports the median and the
// 99th percentile (p50-ms, p99-ms), and the process's CPU time (user and
// system) per message, which other work on a shared machine disturbs
// less than the times.
func BenchmarkPrompt(b *testing.B) {
	h, err := harness.New(harnesstest.Config(b.TempDir(), scripted.Offline{Why: "bench"}, harness.Settings{Model: "offline"}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	ctx := context.Background()
	block := []acp.Block{{Type: "text", Text: "hello"}}
	times := make([]time.Duration, 0, b.N)
	s := &quietStream{}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := acp.Prompt{Agent: testAgent, Thread: "link:bench-" + strconv.Itoa(i/promptTurnsPerThread), Blocks: block}
		start := time.Now()
		res, err := h.Prompt(ctx, p, s)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if res.StopReason != acp.StopEndTurn || res.Steered || s.taken != i+1 {
			b.Fatalf("answered %+v, taken %d times", res, s.taken)
		}
		if res.Delivered != nil {
			res.Delivered() // as acp.Serve does once the response is written
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
	slices.Sort(times)
	nth := func(p int) float64 {
		i := min(len(times)-1, max(0, (len(times)*p+99)/100-1))
		return float64(times[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(nth(50), "p50-ms")
	b.ReportMetric(nth(99), "p99-ms")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
