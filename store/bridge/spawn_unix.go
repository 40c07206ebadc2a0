//go:build unix && !linux

package bridge

import (
	"os/exec"
	"syscall"
)

// childAttrs puts the child in a process group of its own, so a signal
// meant for the harness's group (^C) leaves it serving the turns that are
// ending. Only Linux ends a child when its parent dies; elsewhere a child
// whose harness was killed serves on until it is stopped.
func childAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopChild asks the child to end.
func stopChild(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGTERM) }
