package log_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// BenchmarkBegin is a conversation's beginning as its first message
// waits for it, with a folder made ahead: its lease (which takes the
// folder) and its first event, synced. The folder made ahead is made
// between, untimed, as after a turn. It reports the median (p50-ms)
// beside the mean.
func BenchmarkBegin(b *testing.B) {
	ctx := context.Background()
	d := log.Open(b.TempDir()).MakeAhead("chat.md")
	defer d.Close()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		thread := "link:begin-" + strconv.Itoa(i)
		b.StartTimer()
		start := time.Now()
		if _, err := d.Lease(ctx, thread, "h", time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := d.Append(ctx, thread, storetest.Event(1, "hello")); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		if err := d.Release(ctx, thread, "h"); err != nil {
			b.Fatal(err)
		}
		d.WaitAhead()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/float64(time.Millisecond), "p50-ms")
}
