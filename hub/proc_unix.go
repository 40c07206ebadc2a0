//go:build unix

package hub

import (
	"os/exec"
	"syscall"
)

// ownGroup has cmd start in a process group of its own, so ending it
// ends every process it started.
// kept says it runs under a keeper (KeeperMain).
func ownGroup(cmd *exec.Cmd, kept bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr, kept)
}

// signalGroup sends the group SIGTERM, or SIGKILL when kill.
func signalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pgid, sig)
}

// groupAlive says whether a process of group pgid is left (a zombie
// counts until its parent reaps it).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
