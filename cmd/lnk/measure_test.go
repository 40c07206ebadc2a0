package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs lnk's command line when lnk measure starts this test
// binary as lnk (its floor server), and its helpers (a sandbox's
// trampoline, a background command's supervisor) as lnk's main does.
func TestMain(m *testing.M) {
	if code, ok := helper(os.Args); ok {
		os.Exit(code)
	}
	if os.Getenv(envMeasureRunLnk) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// lnk measure runs the real program and its floor, and prints each
// figure, plausible, as a table and as JSON.
func TestMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "lnk-link-harness")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/lnk-dev/link/cmd/lnk-link-harness").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	var out, errb safeBuffer
	home := t.TempDir()
	args := []string{"--harness", bin, "--home", home, "--messages", "10", "--turns", "8", "--runs", "1", "--samples", "1", "--idle", "10ms", "--agents", "1,3", "--concurrency", "1,4", "--prefix-turns", "120", "--json"}
	if code := runMeasure(t.Context(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r report
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	got := map[string]figure{}
	var names []string
	for _, f := range r.Figures {
		got[f.Name] = f
		names = append(names, f.Name)
	}
	want := []string{"start to /health", "per message, warm, p50", "per message, warm, p99", "per message, cold, p50", "per message, cold, p99", "turns/s, 1 at once", "turns/s, 4 at once", "blank unit, bind to first answer", "idle RSS, 1 agents", "idle RSS, 3 agents", "idle RSS per agent past the first", "turns/s, 4 at once over 1 at once", figPrefixOn, figPrefixOff}
	withFloor := want[:8]
	if runtime.GOOS == "linux" { // the CPU a turn, each server's, from /proc
		want = slices.Insert(want, 7, "CPU a turn, 4 at once")
		want = slices.Insert(want, 6, "CPU a turn, 1 at once")
		withFloor = want[:10]
	}
	if !slices.Equal(names, want) {
		t.Fatalf("figures %q, want %q", names, want)
	}
	for _, name := range withFloor {
		f := got[name]
		if strings.HasPrefix(name, "CPU a turn") { // counted in ticks of 10 ms, of which a few turns may take none
			if f.Value < 0 || f.Value > 1e6 || f.Floor == nil || f.Unit != "µs" {
				t.Errorf("%s: %+v", name, f)
			}
			continue
		}
		if f.Value <= 0 || f.Floor == nil || *f.Floor <= 0 || f.Ratio == nil || *f.Ratio <= 0 {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if f := got["per message, warm, p50"]; f.Value > 5000 || f.Target != "≤ 1.6× floor" || f.Met == nil || *f.Met != (*f.Ratio <= 1.6) {
		t.Errorf("warm p50: %+v", f)
	}
	if f := got["per message, cold, p50"]; f.Target != "≤ 2.5× floor" || f.Met == nil || *f.Met != (*f.Ratio <= 2.5) {
		t.Errorf("cold p50: %+v", f)
	}
	// Turns a second beside the floor's at the same number at once: 1
	// has its target, 4 none (only 1 and 64 have one).
	if f := got["turns/s, 1 at once"]; f.Target != "≥ 0.5× floor" || f.Met == nil || *f.Met != (*f.Ratio >= 0.5) {
		t.Errorf("turns/s at 1: %+v", f)
	}
	if f := got["turns/s, 4 at once"]; f.Target != "" || f.Met != nil {
		t.Errorf("turns/s at 4: %+v", f)
	}
	if f := got["turns/s, 4 at once over 1 at once"]; f.Target != "" || f.Met != nil || f.Value <= 0 {
		t.Errorf("the gain: %+v", f)
	}
	if f := got["start to /health"]; f.Value > 60000 || f.Target != "< 100 ms" || f.Met == nil {
		t.Errorf("start: %+v", f)
	}
	if runtime.GOOS == "linux" {
		one, three := got["idle RSS, 1 agents"], got["idle RSS, 3 agents"]
		if one.Value < 1 || one.Value > 1024 || three.Value < one.Value/2 || one.Met == nil {
			t.Errorf("memory: %+v, %+v", one, three)
		}
	}
	for _, name := range []string{figPrefixOn, figPrefixOff} {
		if f := got[name]; f.Value < 0.9 || f.Value > 1 || f.Unit != "share" {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if f := got[figPrefixOn]; f.Met == nil || *f.Met != (f.Value >= 0.97) {
		t.Errorf("%s: %+v", figPrefixOn, f)
	}
	var line safeBuffer
	printPrefix(&line, 120, prefixShare{share: got[figPrefixOn].Value}, prefixShare{share: got[figPrefixOff].Value})
	if !regexp.MustCompile(`(?m)^cached prefix share: 0\.\d{3} \(120 turns`).MatchString(line.String()) {
		t.Errorf("printed %q", line.String())
	}
	if r.Runs != 1 || r.Machine.CPUs < 1 || r.Machine.LoadStart == "" {
		t.Errorf("machine %+v", r.Machine)
	}
	// The table prints the same figures.
	out = safeBuffer{}
	r.print(&out)
	for _, s := range []string{"what", "harness", "floor", "ratio", "start to /health", "idle RSS per agent past the first", "load "} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the table has no %q: %s", s, out.String())
		}
	}
	// Measured again on the same home, each cold message is still the
	// first of its conversation.
	if code := runMeasure(t.Context(), []string{"--harness", bin, "--home", home, "--messages", "3", "--turns", "2", "--runs", "1", "--samples", "1", "--idle", "0s", "--agents", "1", "--concurrency", "1", "--prefix-turns", "0", "--json"}, &safeBuffer{}, &errb); code != 0 {
		t.Fatalf("again: exit %d: %s", code, errb.String())
	}
	chats := filepath.Join(home, "agents", "main", "chats")
	folders, _ := filepath.Glob(filepath.Join(chats, "link-cold-*"))
	if len(folders) != 10+3 {
		t.Fatalf("%d cold conversations, want %d", len(folders), 10+3)
	}
	for _, dir := range folders {
		b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		if n := strings.Count(string(b), "\n"); err != nil || n != 2 {
			t.Fatalf("%s: %d events (%v), want its message and its answer alone", filepath.Base(dir), n, err)
		}
	}
	for _, bad := range [][]string{{"--messages", "0"}, {"words"}, {"--idle", "-1s"}, {"--agents", "0"}, {"--concurrency", "x"}} {
		if code := runMeasure(t.Context(), bad, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d", bad, code)
		}
	}
}

func TestParseStatus(t *testing.T) {
	m, err := parseStatus([]byte("Name:\tlnk\nVmRSS:\t   20480 kB\nRssAnon:\t    2048 kB\nRssFile:\t   18432 kB\nThreads:\t6\n"))
	if err != nil || m != (memory{rss: 20 << 20, anon: 2 << 20, file: 18 << 20}) {
		t.Fatalf("%+v, %v", m, err)
	}
	for _, bad := range []string{"", "VmRSS: 12 MB\n", "VmRSS: x kB\n", "VmRSS: -1 kB\n", "RssAnon: 1 kB\n"} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if d := nearestRank([]time.Duration{1, 2, 3, 4}, 50); d != 2 {
		t.Errorf("p50 of 1..4 = %d", d)
	}
}

// FuzzParseStatus proves the reader of /proc/<pid>/status never panics
// and gives no negative size.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("VmRSS:\t   20480 kB\nRssAnon:\t2048 kB\nRssFile:\t18432 kB\n"))
	f.Add([]byte("VmRSS: 1 kB"))
	f.Add([]byte("VmRSS:\t\nRssFile: 99999999999999999999 kB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseStatus(b)
		if err == nil && (m.rss < 0 || m.anon < 0 || m.file < 0) {
			t.Fatalf("%+v", m)
		}
	})
}
