package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// BenchmarkIdleMemory: lnk-acp as it is shipped (built without cgo), the
// scripted agent behind it, idle (2 s) after 100 messages on four
// threads: the resident memory of the hub's process alone, its
// harness's apart. The messages are as many whatever b.N (which stays 1
// at the default benchtime: the build alone takes longer), so each run
// measures the same.
func BenchmarkIdleMemory(b *testing.B) {
	const idleMessages = 100
	bin := buildACP(b)
	home, keyFile, key := keyedHome(b)
	state := b.TempDir()
	cmd := exec.Command(bin, "--home", home, "--key-file", keyFile, "--port", "0", "--", os.Args[0])
	cmd.Env = append(os.Environ(), stdioagent.Role+"=agent", stdioagent.EnvState+"="+state)
	url := startProcess(b, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range idleMessages {
		if got := message(b, ctx, url, key, "telegram:"+strconv.Itoa(1+i%4), "hi"); got != "echo: hi" {
			b.Fatalf("answered %q", got)
		}
	}
	// Two seconds with nothing asked: the time passing is what is
	// measured (what an idle hub and harness hold), not a wait for work.
	time.Sleep(2 * time.Second)
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

// BenchmarkPromptPeakRSS is how much the peak resident memory of a real
// lnk-acp (built as shipped; lnk-link-harness serve --stdio behind it,
// its model the fake provider, its memory apart) grows with 1 and with 2
// prompts of 31 MB sent at once, each in a thread of its own, over the
// bytes of the prompts (peakRSS/prompt): lines of prose, a JSON escape
// on the wire each line. Each figure is the median of b.N fresh
// processes. $LNK_BENCH_ACP names another build of lnk-acp to measure.
func BenchmarkPromptPeakRSS(b *testing.B) {
	bin, harness := os.Getenv("LNK_BENCH_ACP"), buildLinkHarness(b)
	if bin == "" {
		bin = buildACP(b)
	}
	const size = 31 << 20
	line := strings.Repeat("Une ligne de prose, « ça va », dit-il. ", 3) + "\n"
	text := strings.Repeat(line, size/len(line))
	for _, n := range []int{1, 2} {
		b.Run(strconv.Itoa(n)+"x31MB", func(b *testing.B) {
			var ratios, grewMB []float64
			for b.Loop() {
				grew := promptPeak(b, bin, harness, n, text)
				ratios = append(ratios, float64(grew)/float64(n*len(text)))
				grewMB = append(grewMB, float64(grew)/(1<<20))
			}
			b.ReportMetric(median(ratios), "peakRSS/prompt")
			b.ReportMetric(median(grewMB), "peak-MB")
		})
	}
}

// promptPeak starts lnk-acp at bin serving harness, sends it a small
// message, then n prompts of text at once, and returns how much its peak
// resident memory grew.
func promptPeak(b *testing.B, bin, harness string, n int, text string) int64 {
	fake := fakeprovider.New()
	defer fake.Close()
	for range n + 1 {
		fake.Script(fakeprovider.Turn{Text: "ok"}) // not the prompt echoed
	}
	home, keyFile, key := keyedHome(b)
	cmd := exec.Command(bin, "--home", home, "--key-file", keyFile, "--port", "0", "--",
		harness, "serve", "--stdio", "--home", b.TempDir(), "--model", "anthropic/claude-test")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + fake.URL()}
	url := startProcess(b, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := proctest.Prompt(ctx, url, key, "main", "telegram:99", "hi"); err != nil {
		b.Fatal(err)
	}
	before, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := proctest.Prompt(ctx, url, key, "main", "telegram:"+strconv.Itoa(100+i), text); err != nil {
				b.Errorf("prompt %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	after, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	return after - before
}

// keyedHome is a home for lnk-acp and the endpoint key in a file there.
func keyedHome(t testing.TB) (home, keyFile string, key []byte) {
	home = t.TempDir()
	keyFile, key = filepath.Join(home, "key"), []byte("lnk-acp-test-key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return home, keyFile, key
}

// startProcess starts cmd, lnk-acp, and returns its endpoint's address
// once it listens; it is ended (SIGTERM, and waited for) as the test
// ends.
func startProcess(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "endpoint ")
	if !ok {
		t.Fatalf("lnk-acp said %q", line)
	}
	return url
}

// buildACP builds lnk-acp as it is shipped (without cgo).
func buildACP(b *testing.B) string {
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
	return bin
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
