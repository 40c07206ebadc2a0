//go:build !unix

package stdioagent

import (
	"os"
	"time"
)

// pgrp is the agent's own process: there are no groups.
func pgrp() int { return os.Getpid() }

// ignoreTerm does nothing: there is no SIGTERM to live through.
func ignoreTerm() {}

// killParent kills the agent's parent outright.
func killParent() {
	if p, err := os.FindProcess(os.Getppid()); err == nil {
		p.Kill()
	}
}

// escapee waits for good.
func escapee() {
	for {
		time.Sleep(time.Hour)
	}
}
