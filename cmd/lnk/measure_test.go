package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lnk measure runs the real program and prints its per-message times and
// its idle memory, each plausible.
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
	code := runMeasure(t.Context(), []string{"--harness", bin, "--home", t.TempDir(), "--messages", "40", "--samples", "2", "--idle", "100ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	m := regexp.MustCompile(`\((\d+) messages\): p50 ([\d.]+) ms, p99 ([\d.]+) ms, mean ([\d.]+) ms, (\d+) messages/s`).FindStringSubmatch(got)
	if m == nil || m[1] != "40" {
		t.Fatalf("no times in %q", got)
	}
	p50, _ := strconv.ParseFloat(m[2], 64)
	p99, _ := strconv.ParseFloat(m[3], 64)
	if p50 <= 0 || p99 < p50 || p99 > 5000 {
		t.Fatalf("p50 %v ms, p99 %v ms", p50, p99)
	}
	if runtime.GOOS == "linux" {
		r := regexp.MustCompile(`VmRSS, median of 2\): ([\d.]+) MB \(([\d.]+) MB its own`).FindStringSubmatch(got)
		if r == nil {
			t.Fatalf("no memory in %q", got)
		}
		rss, _ := strconv.ParseFloat(r[1], 64)
		own, _ := strconv.ParseFloat(r[2], 64)
		if rss < 1 || rss > 1024 || own <= 0 || own > rss {
			t.Fatalf("rss %v MB, its own %v MB", rss, own)
		}
	}
	if !strings.Contains(got, "load ") || !strings.Contains(got, "targets: p50 under 2.00 ms: ") {
		t.Fatalf("printed %q", got)
	}
	for _, bad := range [][]string{{"--messages", "0"}, {"words"}, {"--idle", "-1s"}} {
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
