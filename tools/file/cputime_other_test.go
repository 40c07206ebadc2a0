//go:build !unix

package file

import "time"

// cpuTime is not known here: the benchmark reports 0.
func cpuTime() time.Duration { return 0 }
