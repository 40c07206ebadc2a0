package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/internal/stdioagent"
)

// BenchmarkIdleMemory: lnk-acp as it is shipped (built without cgo), the
// scripted agent behind it, idle (2 s) after 100 messages on four
// threads: the resident memory of the hub's process alone, its
// harness's apart. The messages are as many whatever b.N (which stays 1
// at the default benchtime: the build alone takes longer), so each run
// measures the same.
func BenchmarkIdleMemory(b *testing.B) {
	const idleMessages = 100
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(b.TempDir(), "lnk-acp")
	build := exec.Command(goTool, "build", "-o", bin, "github.com/lnk-dev/link/cmd/lnk-acp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build lnk-acp: %v\n%s", err, out)
	}
	home, state := b.TempDir(), b.TempDir()
	keyFile := filepath.Join(home, "key")
	key := []byte("lnk-acp-test-key")
	os.WriteFile(keyFile, key, 0o600)
	cmd := exec.Command(bin, "--home", home, "--key-file", keyFile, "--port", "0", "--", os.Args[0])
	cmd.Env = append(os.Environ(), stdioagent.Role+"=agent", stdioagent.EnvState+"="+state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "endpoint ")
	if !ok {
		b.Fatalf("lnk-acp said %q", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range idleMessages {
		if got := message(b, ctx, url, key, "telegram:"+strconv.Itoa(1+i%4), "hi"); got != "echo: hi" {
			b.Fatalf("answered %q", got)
		}
	}
	time.Sleep(2 * time.Second) // idle
	hub := rssKB(b, cmd.Process.Pid)
	agent := rssKB(b, lastPgidOf(state))
	b.ReportMetric(float64(hub), "hub-rss-KB")
	b.ReportMetric(float64(agent), "harness-rss-KB")
}

// rssKB is process pid's resident memory now (VmRSS), in KB; b fails
// when it can't be read.
func rssKB(b *testing.B, pid int) int64 {
	rss, err := proctest.Status(pid, "VmRSS")
	if err != nil {
		b.Fatalf("resident memory of %d: %v", pid, err)
	}
	return rss >> 10
}

// lastPgidOf is the process group (the leader's pid) of the agent last
// started.
func lastPgidOf(state string) int {
	b, _ := os.ReadFile(filepath.Join(state, "log"))
	pgid := 0
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "pgid "); ok {
			pgid = atoi(rest)
		}
	}
	return pgid
}
