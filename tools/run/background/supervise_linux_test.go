package background

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// childrenOf finds a process's children, as the kernel lists them.
func TestChildrenOf(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if kids := childrenOf(os.Getpid()); !slices.Contains(kids, cmd.Process.Pid) {
		t.Fatalf("children %v lack %d", kids, cmd.Process.Pid)
	}
}
