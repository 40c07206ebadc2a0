//go:build !unix

package scheduler

// schedulerChild is the scheduler's process of kill_unix_test.go, which
// SIGKILLs itself: none where there is no SIGKILL.
func schedulerChild() int { return 2 }
