//go:build unix

package file

import (
	"syscall"
	"time"
)

// cpuTime is the CPU this process has taken, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
