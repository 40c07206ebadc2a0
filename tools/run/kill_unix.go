//go:build unix

package run

import (
	"os"
	"syscall"
)

// killGroup kills p's process group, every process of the command (its
// pid namespace ends with the trampoline).
func killGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }
