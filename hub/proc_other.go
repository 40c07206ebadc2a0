//go:build !unix

package hub

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups: the harness's
// own process alone is ended.
func ownGroup(cmd *exec.Cmd, kept bool) {}

// signalGroup ends the harness's process (no group, no gentle signal).
func signalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// groupAlive is false: with no group, the reaped process was all of it.
func groupAlive(int) bool { return false }

// adoptOrphans does nothing where there are no process groups.
func adoptOrphans() {}

// reapGroup does nothing: the harness's own process was reaped.
func reapGroup(int) {}

// under is none: the group is all that is ended here.
func under(int) []int { return nil }

// killEach does nothing: under gives none.
func killEach([]int) {}

// reapEach does nothing: under gives none.
func reapEach([]int) bool { return false }
