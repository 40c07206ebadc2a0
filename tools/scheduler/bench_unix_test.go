//go:build unix

package scheduler

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/tools/send"
)

// BenchmarkReminderDelay is the delay from a schedule's time to Link
// Harness storing its message (the message event's time, written as the
// harness has it), over 200 reminders due 50 ms apart on the machine's
// clock, each sent to a harness on a real endpoint: p50 and p99 in ms.
func BenchmarkReminderDelay(b *testing.B) {
	const n = 200
	for range b.N {
		b.StopTimer()
		r := harnesstest.New(b)
		answers(r, n)
		s, err := Open(Options{Paths: r.Paths(), Settings: constSettings(testSettings)})
		if err != nil {
			b.Fatal(err)
		}
		s.SetTarget(targetOf(r))
		due := map[string]time.Time{}
		for i := range n {
			sc, err := s.Add(b.Context(), Request{Text: "tick", After: (5*time.Second + time.Duration(i)*50*time.Millisecond).String()}, "telegram:5", 0)
			if err != nil {
				b.Fatal(err)
			}
			due[occurrenceID(sc.ID, sc.Next)] = sc.Next
		}
		b.StartTimer()
		testwait.For(b, 2*time.Minute, "every reminder stored", func() bool { return len(scheduled(r, "telegram:5")) == n })
		b.StopTimer()
		var delays []float64
		for _, e := range scheduled(r, "telegram:5") {
			delays = append(delays, float64(e.Time.Sub(due[e.MessageID]))/float64(time.Millisecond))
		}
		slices.Sort(delays)
		b.ReportMetric(delays[n/2], "p50-ms")
		b.ReportMetric(delays[n*99/100], "p99-ms")
		b.ReportMetric(delays[n-1], "max-ms")
		s.Close()
	}
}

// BenchmarkTenThousandIdle is a scheduler holding 10,000 schedules: the
// time Open takes to read them, then, over 5 s with none due, the CPU the
// process spends (its user and system time, the benchmark's own waiting
// included), the timers it arms, and the heap it holds.
func BenchmarkTenThousandIdle(b *testing.B) {
	for range b.N {
		b.StopTimer()
		p := pathsIn(b, b.TempDir())
		writeSchedules(b, p, DefaultMaxSchedules, time.Now().Add(time.Hour))
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		clock := &countingClock{}
		start := time.Now()
		s, err := Open(Options{Paths: p, Clock: clock, Settings: constSettings(testSettings)})
		if err != nil {
			b.Fatal(err)
		}
		opened := time.Since(start)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		cpu0 := cpuTime()
		// Five seconds with nothing due: the time passing is what is
		// measured (the idle scheduler's CPU), not a wait for work.
		time.Sleep(5 * time.Second)
		cpu := cpuTime() - cpu0
		b.ReportMetric(float64(opened)/float64(time.Millisecond), "open-ms")
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/5, "idle-cpu-ms/s")
		b.ReportMetric(float64(clock.armed.Load()), "timers-armed")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MiB")
		if len(s.List()) != DefaultMaxSchedules {
			b.Fatalf("%d schedules read", len(s.List()))
		}
		s.Close()
	}
}

// countingClock is the machine's clock, counting the timers armed.
type countingClock struct {
	wallClock
	armed atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.armed.Add(1)
	return c.wallClock.AfterFunc(d, f)
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func targetOf(r *harnesstest.Rig) send.Target {
	return send.Target{URL: r.URL, Key: r.Key, Agent: harnesstest.Agent}
}

// constSettings reads set, whatever config.json says.
func constSettings(set Settings) func(context.Context) (Settings, error) {
	return func(context.Context) (Settings, error) { return set, nil }
}
