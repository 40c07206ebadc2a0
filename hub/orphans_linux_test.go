package hub

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// TestNoOrphans: 100 times, an agent started through an npx-style wrapper
// kills the wrapper mid-turn and lives on ignoring SIGTERM; each time the
// turn fails, the whole group is ended and reaped, and the next message
// starts a new one. At the end no process of any group is left, no
// zombie, and the hub's memory and goroutines are flat.
func TestNoOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	r := newRig(t, []string{envNoTerm + "=1", envCaps + "=resume"}, func(c *Config) {
		c.Env = append(c.Env, "HUB_TEST_ROLE=wrapper")
		c.Grace = 50 * time.Millisecond
	})
	ctx := testCtx(t, 5*time.Minute)
	var heapAt10 uint64
	var goroutinesAt10 int
	for i := 0; i < cycles; i++ {
		e := r.message(ctx, "telegram:1", "orphan", nil)
		if e.err == nil || !strings.Contains(e.err.Error(), "stopped mid-turn") {
			t.Fatalf("cycle %d: answered %v", i, e.err)
		}
		if i == 9 {
			heapAt10, goroutinesAt10 = afterEnd(t, r)
		}
	}
	heap, goroutines := afterEnd(t, r)
	r.close()
	groups := map[int]bool{}
	for _, l := range r.agentLog("pgid ") {
		n, _ := strconv.Atoi(strings.TrimPrefix(l, "pgid "))
		groups[n] = true
	}
	if len(groups) != cycles {
		t.Errorf("%d process groups for %d cycles", len(groups), cycles)
	}
	left := 0
	for g := range groups {
		if syscall.Kill(-g, 0) == nil {
			left++
		}
	}
	if left != 0 {
		t.Errorf("%d process groups left", left)
	}
	if z := zombies(); z != 0 {
		t.Errorf("%d zombie children left", z)
	}
	t.Logf("heap %d KB after 10 cycles, %d KB after %d; goroutines %d, %d", heapAt10>>10, heap>>10, cycles, goroutinesAt10, goroutines)
	if heap > heapAt10+2<<20 {
		t.Errorf("heap grew from %d KB to %d KB", heapAt10>>10, heap>>10)
	}
	if goroutines > goroutinesAt10+3 {
		t.Errorf("goroutines grew from %d to %d", goroutinesAt10, goroutines)
	}
}

// afterEnd waits until the last harness's group is ended, then measures
// the heap and the goroutines.
func afterEnd(t *testing.T, r *rig) (uint64, int) {
	testwait.For(t, 10*time.Second, "no run of the harness current", func() bool {
		r.hub.mu.Lock()
		defer r.hub.mu.Unlock()
		return r.hub.cur == nil
	})
	r.hub.wg.Wait() // every run has ended its group
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, runtime.NumGoroutine()
}

// zombies counts this process's children that exited unreaped.
func zombies() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == me {
			n++
		}
	}
	return n
}
