package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// procCPU is what process pid's threads have had of the CPUs, from
// /proc/<pid>/task/*/schedstat: the time they ran, to the nanosecond,
// and how many times one was given a CPU (woken, or its turn come).
func procCPU(tb testing.TB, pid int) (ran time.Duration, runs int64) {
	tb.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		tb.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/schedstat")
		if err != nil {
			continue // a thread ended since the folder was read
		}
		f := strings.Fields(string(b))
		if len(f) != 3 {
			tb.Fatalf("schedstat %q", b)
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		n, _ := strconv.ParseInt(f[2], 10, 64)
		ran += time.Duration(ns)
		runs += n
	}
	return ran, runs
}

// idleWindow is how long the server is watched while nothing is asked of
// it, and idleRuns and idleCPU what it may have of the CPUs in that time:
// a poll, a ticker or a look at the files more often than every three
// seconds would be given a CPU at least once in each window (more, as
// the runtime wakes a thread for a goroutine's timer and another to run
// it), and a single look at the files takes more than idleCPU.
const (
	idleWindow = 3 * time.Second
	idleRuns   = 1
	idleCPU    = 2 * time.Millisecond
)

// Memory runs nothing while nothing is asked of it: after a session has
// indexed, searched and remembered, the server process, its session
// still open, once it has settled (the runtime's own work after the
// calls, such as returning freed memory, done) goes a whole window given
// a CPU at most once and using under 2 ms of it. It is measured to the
// nanosecond and by wakeups, not by the kernel's 10 ms ticks, which a
// loaded machine charges unevenly; a server that never settles, within
// 30 s, fails.
func TestNoIdleCPU(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	for i := range 50 {
		write(t, filepath.Join(p.Files(), "f"+strconv.Itoa(i)+".md"), strings.Repeat("idle words here ", 50))
	}
	cmd, url := startProcess(t, home)
	s := connect(t, url)
	ok(t, s, "remember", map[string]any{"note": "idle check"})
	ok(t, s, "search", map[string]any{"query": "idle words"})
	pid := cmd.Process.Pid
	var windows []string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		ran0, runs0 := procCPU(t, pid)
		time.Sleep(idleWindow) // the measure: a window with nothing asked
		ran1, runs1 := procCPU(t, pid)
		ran, runs := ran1-ran0, runs1-runs0
		windows = append(windows, fmt.Sprintf("%v in %d runs", ran, runs))
		if runs <= idleRuns && ran < idleCPU {
			t.Logf("idle windows of %v: %s", idleWindow, strings.Join(windows, ", "))
			return
		}
	}
	t.Fatalf("the idle server never went %v given a CPU at most %d times and under %v: %s", idleWindow, idleRuns, idleCPU, strings.Join(windows, ", "))
}
