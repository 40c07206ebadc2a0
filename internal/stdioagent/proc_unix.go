//go:build unix

package stdioagent

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// pgrp is the agent's process group.
func pgrp() int { return syscall.Getpgrp() }

// ignoreTerm has the agent live through SIGTERM.
func ignoreTerm() { signal.Ignore(syscall.SIGTERM) }

// killParent kills the agent's parent outright.
func killParent() { syscall.Kill(os.Getppid(), syscall.SIGKILL) }

// escapee leaves the agent's group and session, lives through SIGTERM,
// and waits for good.
func escapee() {
	syscall.Setsid()
	ignoreTerm()
	for {
		time.Sleep(time.Hour)
	}
}
