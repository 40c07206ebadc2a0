package bridge

import (
	"os/exec"
	"syscall"
)

// childAttrs puts the child in a process group of its own, so a signal
// meant for the harness's group (^C) leaves it serving the turns that are
// ending, and has the kernel end it when the harness dies, even by
// SIGKILL, so none is left behind holding the agent's socket.
func childAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// stopChild asks the child to end.
func stopChild(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGTERM) }
