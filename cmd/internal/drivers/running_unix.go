//go:build unix

package drivers

import (
	"errors"
	"syscall"
)

// running says whether a process pid may run: signal 0 finds it, or it
// is another user's.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
