package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// cpuTicks is the CPU time, user and system, process pid has used, in
// clock ticks (/proc/<pid>/stat).
func cpuTicks(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime and stime
	// are the 14th and 15th of the line, the 12th and 13th after it.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// Memory runs nothing while nothing is asked of it: after a session has
// indexed, searched and remembered, the server process, its session
// still open, uses no CPU over a second and a half left alone (at most
// one tick, 10 ms, of the runtime's own).
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
	before := cpuTicks(t, cmd.Process.Pid)
	time.Sleep(1500 * time.Millisecond) // the measure: a second and a half with nothing asked
	if used := cpuTicks(t, cmd.Process.Pid) - before; used > 1 {
		t.Fatalf("the idle server used %d ticks of CPU in 1.5 s", used)
	}
}
