package file

import (
	"os/exec"
	"syscall"
	"testing"
)

// eachWay runs fn the kernel's way (openat2) and the os.Root way, which
// is every other system's and Linux's where openat2 is refused.
func eachWay(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", fn)
	t.Run("os.Root", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		fn(t)
	})
}

// dieWithTest has the kernel kill cmd's process if the test's dies
// first, so a helper that hangs by design outlives no failed test.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
