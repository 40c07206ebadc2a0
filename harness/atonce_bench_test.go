//go:build unix

package harness_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// BenchmarkMessagesAtOnce is turns a second with 1, 8 and 64
// conversations at once, each sending its messages one after another as
// BenchmarkMessage does (a connection each, proved and upgraded), its
// message and answer kept in a log conversation, each synced: how far
// the store's syncs overlap. It reports turns/s, whose ratio of 64's to
// 1's is lnk measure's "turns/s, 64 at once over 1 at once", and the CPU
// a turn costs, the client's and the harness's.
func BenchmarkMessagesAtOnce(b *testing.B) {
	for _, conc := range []int{1, 8, 64} {
		b.Run(strconv.Itoa(conc), func(b *testing.B) {
			r := newBenchRig(b)
			ctx := context.Background()
			block := []acp.Block{{Type: "text", Text: "hello"}}
			send := func(thread string) error {
				conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.URL, Key: r.Key, Agent: testAgent})
				if err != nil {
					return err
				}
				c := acp.NewClient(ctx, conn, nil)
				defer c.Close()
				if _, err := c.Initialize(ctx); err != nil {
					return err
				}
				if err := c.Resume(ctx, thread); err != nil {
					return err
				}
				_, err = c.Prompt(ctx, thread, block, nil)
				return err
			}
			thread := func(g int) string { return "link:at-once-" + strconv.Itoa(g) }
			for g := range conc { // each conversation begun, untimed
				if err := send(thread(g)); err != nil {
					b.Fatal(err)
				}
			}
			each := max(1, b.N/conc)
			errs := make([]error, conc)
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0 := cpuTime()
			began := time.Now()
			for g := range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						if err := send(thread(g)); err != nil {
							errs[g] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(began)
			cpu := cpuTime() - cpu0
			b.StopTimer()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(conc*each)/elapsed.Seconds(), "turns/s")
			// The CPU a turn costs, the client's in this process with it:
			// on two cores, what bounds turns/s at 64 at once.
			b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(conc*each), "cpu-us/turn")
		})
	}
}
