//go:build linux

// Package stracecount counts the system calls of a piece of work by
// running a test of it again, in a process of its own, under strace -f
// -c: the kernel's own count, which a test of a call count compares for
// two lengths of the same work, so what starting the process costs falls
// out.
package stracecount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Count runs this test binary's test named test again under strace -f -c,
// with env added to its environment (by which the test knows it is the
// one counted), and returns how many calls of each name it made. With no
// strace command the test is skipped, or fails in CI, whose run installs
// it (.ci/run).
func Count(t testing.TB, test string, env ...string) map[string]int {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no strace command: .ci/run installs it, and this test needs it in CI")
		}
		t.Skip("no strace command (apt-get install strace)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "calls")
	cmd := exec.Command(strace, "-f", "-c", "-o", out, exe, "-test.run=^"+test+"$", "-test.count=1")
	// GOMAXPROCS not looked at again as the process runs: the runtime's
	// reads of the cgroup's limit would be counted with the work's.
	cmd.Env = append(append(os.Environ(), env...), "GODEBUG=updatemaxprocs=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Its table's rows: % time, seconds, usecs/call, calls, [errors,] syscall.
	counts := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[0][0] < '0' || f[0][0] > '9' {
			continue
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			continue
		}
		counts[f[len(f)-1]] = n
	}
	if len(counts) == 0 {
		t.Fatalf("no calls counted:\n%s", b)
	}
	return counts
}
