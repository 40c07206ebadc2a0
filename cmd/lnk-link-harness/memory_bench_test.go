//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// envBenchHarness names a built lnk-link-harness for
// BenchmarkServePeakRSS to measure in place of the checkout's, so two
// builds are measured by the same benchmark.
const envBenchHarness = "LNK_BENCH_HARNESS"

// servePeak starts the real program (serve, Anthropic's API on the fake
// provider), sends it a small prompt, then n prompts of size bytes at
// once, each in a conversation of its own, and returns how much its peak
// resident memory grew, and how many prompts were answered and how many
// refused as past the agent's bound of prompts in flight.
//
// With later, the peak is of one small message sent after them in the
// first's conversation, which the turn reads back through the window.
func servePeak(b *testing.B, bin string, n, size int, later bool, unit string) (grew int64, answered, refused int) {
	fake := fakeprovider.New()
	defer fake.Close()
	for range n + 2 {
		fake.Script(fakeprovider.Turn{Text: "ok"})
	}
	home := b.TempDir()
	keyFile := filepath.Join(b.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--home", home, "--agent", "main", "--port", "0", "--key-file", keyFile, "--model", "anthropic/claude-test")
	cmd.Env = childEnv(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()})
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "endpoint ") {
		b.Fatalf("the program said %q: %s", sc.Text(), stderr.String())
	}
	url := strings.TrimPrefix(sc.Text(), "endpoint ")
	go func() {
		for sc.Scan() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := proctest.Prompt(ctx, url, []byte(testKey), "main", "link:warm", "hello"); err != nil {
		b.Fatal(err)
	}
	before, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(unit, size/len(unit))
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for i := range n {
		wg.Go(func() {
			err := proctest.Prompt(ctx, url, []byte(testKey), "main", fmt.Sprintf("link:big-%d", i), text)
			var e *acp.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answered++
			case errors.As(err, &e) && strings.Contains(e.Message, "past its bound"):
				refused++
			default:
				b.Errorf("prompt %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if later {
		// The peak from here: the small message's own.
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", cmd.Process.Pid), []byte("5"), 0); err != nil {
			b.Fatalf("reset the peak: %v", err)
		}
		if before, err = proctest.Status(cmd.Process.Pid, "VmRSS"); err != nil {
			b.Fatal(err)
		}
		if err := proctest.Prompt(ctx, url, []byte(testKey), "main", "link:big-0", "and one line more"); err != nil {
			b.Fatal(err)
		}
	}
	after, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	return after - before, answered, refused
}

// BenchmarkServePeakRSS is how much the peak resident memory of a real
// lnk-link-harness serve (Anthropic's API on the fake provider) grows
// with 1 and with 8 prompts of 31 MB sent at once, over the bytes of the
// prompts sent (peakRSS/prompt) and over those answered
// (peakRSS/answered): past the agent's bound of prompts in flight a
// prompt is refused; after31MB is a one-line message after one of 31 MB
// in its conversation, its peak over the large one's size; 1x31MB-escaped
// is one of lines of quoted prose, escaped on the wire. Each figure is the median of b.N fresh processes.
// $LNK_BENCH_HARNESS names another build to measure.
func BenchmarkServePeakRSS(b *testing.B) {
	bin := os.Getenv(envBenchHarness)
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "lnk-link-harness")
		if out, err := exec.Command(driverstest.GoTool(), "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("build lnk-link-harness: %v\n%s", err, out)
		}
	}
	const size = 31 << 20
	for _, c := range []struct {
		n       int
		later   bool
		escaped bool
	}{{1, false, false}, {8, false, false}, {1, true, false}, {1, false, true}} {
		name := fmt.Sprintf("%dx31MB", c.n)
		unit := "0123456789abcdef"
		switch {
		case c.later:
			name = "after31MB"
		case c.escaped:
			// Lines of prose: a JSON escape on the wire at each
			// line's end, within the frame's 32 MiB.
			name, unit = "1x31MB-escaped", strings.Repeat("Une ligne de prose, « ça va », dit-il. ", 3)+"\n"
		}
		b.Run(name, func(b *testing.B) {
			n := c.n
			var sent, done, grewMB []float64
			var answered, refused int
			for b.Loop() {
				grew, a, r := servePeak(b, bin, n, size, c.later, unit)
				sent = append(sent, float64(grew)/float64(n*size))
				done = append(done, float64(grew)/float64(max(a, 1)*size))
				grewMB = append(grewMB, float64(grew)/(1<<20))
				answered, refused = answered+a, refused+r
			}
			b.ReportMetric(median(sent), "peakRSS/prompt")
			b.ReportMetric(median(done), "peakRSS/answered")
			b.ReportMetric(median(grewMB), "peak-MB")
			b.ReportMetric(float64(answered)/float64(b.N), "answered")
			b.ReportMetric(float64(refused)/float64(b.N), "refused")
		})
	}
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
