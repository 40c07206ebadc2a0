package sandbox

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkCost is the sandbox's cost per call: a sandboxed true (the
// trampoline's start, its namespaces, mounts, limits and Landlock, then
// true) against an unconfined fork and exec of true, alternated in one
// run; reported as the medians of each and their difference
// (sandbox-ms, plain-ms, cost-ms), with and without the network
// namespace.
func BenchmarkCost(b *testing.B) {
	for _, c := range []struct {
		name       string
		network    bool
		unconfined bool
	}{{"network-off", false, false}, {"network-on", true, false}, {"unconfined", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			spec := testSpec(b, "true")
			spec.Network, spec.Unconfined = c.network, c.unconfined
			if err := Available(); err != nil {
				b.Fatal(err)
			}
			var boxed, plain []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := exec.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				cmd, err := Command(spec)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				plain = append(plain, t1.Sub(t0))
				boxed = append(boxed, time.Since(t1))
			}
			mb, mp := median(boxed), median(plain)
			b.ReportMetric(ms(mb), "sandbox-ms")
			b.ReportMetric(ms(mp), "plain-ms")
			b.ReportMetric(ms(mb-mp), "cost-ms")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
