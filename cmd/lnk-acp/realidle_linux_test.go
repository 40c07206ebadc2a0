package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/proctest"
)

// BenchmarkRealClaudeIdleMemory: the resident memory of lnk-acp --preset
// claude with all its processes (its keeper, claude-agent-acp, each
// session's Claude Code) after a message on each of 20 threads, then
// once their sessions went idle (--idle-close 20s) while one thread
// stayed active (a message every 5 s): claude-agent-acp keeps a process
// for each session it holds, closed with the session. Threads are as
// many whatever b.N, so each run measures the same.
func BenchmarkRealClaudeIdleMemory(b *testing.B) {
	const threads, idle = 20, 20 * time.Second
	a := realAgents[0]
	if a.name != "claude" {
		b.Fatal("realAgents[0] is not claude")
	}
	for b.Loop() {
		p := runRealProcess(b, a, "--idle-close", idle.String())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		for i := range threads {
			if got := message(b, ctx, p.url, p.key, "telegram:"+strconv.Itoa(i), "hello "+strconv.Itoa(i)); !strings.Contains(got, "hello") {
				b.Fatalf("thread %d answered %q", i, got)
			}
		}
		all, open := treeRSS(b, p.cmd.Process.Pid), len(descendantsOf(p.cmd.Process.Pid))
		for strings.Count(p.stderr.String(), "closed an idle session") < threads-1 {
			if ctx.Err() != nil {
				b.Fatalf("sessions never closed: %s", p.stderr.String())
			}
			message(b, ctx, p.url, p.key, "telegram:0", "still here")
			// The active thread's pace, by the real clock: the other
			// threads' sessions close by lnk-acp's idle timer, which is
			// what is measured, so time must pass; not a wait for work.
			time.Sleep(5 * time.Second)
		}
		one := treeRSS(b, p.cmd.Process.Pid)
		cancel()
		b.ReportMetric(float64(all)/(1<<10), "MB-20-open")
		b.ReportMetric(float64(open), "processes-20-open")
		b.ReportMetric(float64(one)/(1<<10), "MB-1-open")
		b.ReportMetric(float64(len(descendantsOf(p.cmd.Process.Pid))), "processes-1-open")
	}
}

// treeRSS is the resident memory of pid and every process under it, in
// KB.
func treeRSS(b *testing.B, pid int) int64 {
	var sum int64
	for _, p := range append([]int{pid}, descendantsOf(pid)...) {
		rss, err := proctest.Status(p, "VmRSS")
		if err == nil {
			sum += rss >> 10
		}
	}
	return sum
}
