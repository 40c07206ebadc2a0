//go:build !unix

package bridge

import "os/exec"

// childAttrs has nothing to set where there are no process groups.
func childAttrs(*exec.Cmd) {}

// stopChild ends the child: with no SIGTERM, at once.
func stopChild(cmd *exec.Cmd) { cmd.Process.Kill() }
