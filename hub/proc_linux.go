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
