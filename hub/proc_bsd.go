//go:build unix && !linux

package hub

import "syscall"

// dieWithParent does nothing where the system has no parent-death signal:
// a harness whose hub was killed outright ends when it sees its input end.
func dieWithParent(*syscall.SysProcAttr, bool) {}

// adoptOrphans does nothing where there are no child subreapers: init
// adopts and reaps what a harness leaves.
func adoptOrphans() {}

// reapGroup reaps the children of group pgid that have exited, without
// waiting.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// under is none: the group is all that is ended here.
func under(int) []int { return nil }

// killEach does nothing: under gives none.
func killEach([]int) {}

// reapEach does nothing: under gives none.
func reapEach([]int) bool { return false }
