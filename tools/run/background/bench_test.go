package background

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartTold: a background command's whole life as the model
// sees it, from run__start to its end told (sh -c true). Reports the
// supervisor's resident memory while its command runs (supervisor-kB).
func BenchmarkStartTold(b *testing.B) {
	r := newRecorder()
	m, err := Open(Options{Dir: b.TempDir(), Teller: r, Poll: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	long, err := m.Start(ctx, Request{Thread: "link:test", Command: "sleep", Spec: shell("exec sleep 1000")})
	if err != nil {
		b.Fatal(err)
	}
	var proc Proc
	readJSON(filepath.Join(m.dir(long.ID), procFile), &proc)
	rss := residentKB(proc.Supervisor)
	m.Stop(ctx, long.ID)
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Start(ctx, Request{Thread: "link:test", Command: "true", Spec: shell("true")}); err != nil {
			b.Fatal(err)
		}
		<-r.told
	}
	b.ReportMetric(float64(rss), "supervisor-kB")
}

// residentKB is process pid's resident memory, VmRSS.
func residentKB(pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
