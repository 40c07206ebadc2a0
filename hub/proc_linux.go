package hub

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

var subreaper sync.Once

// adoptOrphans makes this process a child subreaper, once: a process the
// harness leaves behind (a wrapper's child, once the wrapper exits) is
// then this process's child, reaped by reapGroup when its group is ended,
// not a zombie under an init that may never reap it.
func adoptOrphans() {
	subreaper.Do(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

// reapGroup reaps the children of group pgid that have exited, without
// waiting; call it once the group's leader is reaped.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// under are the processes under pid, read from /proc.
func under(pid int) []int { return descendants(pid) }

// killEach sends each of pids SIGKILL.
func killEach(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// reapEach reaps those of pids that are this process's children and
// have exited, without waiting, and says whether any of them is left.
func reapEach(pids []int) (left bool) {
	for _, pid := range pids {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		left = left || syscall.Kill(pid, 0) == nil
	}
	return left
}
