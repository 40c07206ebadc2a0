package scheduler

import (
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTaskRoundTrip is a task's whole way with a model that answers
// at once (the fake provider's echo), one task at a time: start_task
// called, the task's message sent and its turn run, its answer saved
// and brought back to the parent's conversation as a message (the
// parent's own turn then runs on, unmeasured). It reports the median and
// the 90th percentile.
func BenchmarkTaskRoundTrip(b *testing.B) {
	r := newHarnessRig(b, 4)
	done := make(chan string, 1)
	r.team.cfg.Done = func(from string) { done <- from }
	cs := connectTo(b, r.env["LNK_SCHEDULER"])
	meta := mcp.Meta{metaThread: "link:bench", metaTools: []string{"scheduler__start_task"}}
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if text, failed := call(b, cs, callStartTask, StartTaskIn{Text: "say ok"}, meta); failed {
			b.Fatal(text)
		}
		<-done
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "ms-p90")
}
