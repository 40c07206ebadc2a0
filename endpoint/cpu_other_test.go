//go:build !unix

package endpoint

import "time"

// cpuTime is 0 where getrusage isn't: the benchmarks report no CPU.
func cpuTime() time.Duration { return 0 }
