//go:build linux

package log_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/stracecount"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// A warm turn's calls to the log (the lease taken, the events read, the
// message and its answer appended, the lease let go, the events read
// again) open events.jsonl once a call and read the disk twice: the
// lease at each of its two calls. The appends, the read from the event
// the turn before wrote last and the look after the let-go find the file
// as the call before left it (seen.go) and read nothing of it. An open or
// a read more fails it: the reads are the kernel's own count (syscr in
// /proc/self/io).
func TestWarmTurnCalls(t *testing.T) {
	d := log.Open(t.TempDir())
	turn := warmTurn(t, d, false)
	for range 3 {
		turn() // the conversation begun, its files made
	}
	opened := log.CountOpens(t)
	idle := readsSince(t, readCount(t)) // the count's own read
	for range 5 {
		before := readCount(t)
		opens := opened()
		turn()
		if reads := readsSince(t, before) - idle; reads != 2 {
			t.Errorf("a warm turn made %d reads, want 2 (the lease's)", reads)
		}
		if n := opened() - opens; n != 6 {
			t.Errorf("a warm turn opened events.jsonl %d times, want 6 (one a call)", n)
		}
	}
}

// warmTurn is a turn's calls to d, as the harness makes them: the lease
// taken, the events read from the last the turn before wrote, the message
// and its answer appended, the lease let go, and the events read again;
// paired, the lease taken with the read and let go with the look after
// it (store.LeaseReader).
func warmTurn(t *testing.T, d *log.Driver, paired bool) func() {
	ctx := context.Background()
	const thread, holder = "link:calls", "h"
	seq := int64(0)
	return func() {
		t.Helper()
		var err error
		if paired {
			_, _, err = d.LeaseRead(ctx, thread, holder, time.Minute, max(seq, 1))
		} else if _, err = d.Lease(ctx, thread, holder, time.Minute); err == nil {
			_, err = d.Read(ctx, thread, max(seq, 1))
		}
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			seq++
			if err := d.Append(ctx, thread, storetest.Event(seq, "calls")); err != nil {
				t.Fatal(err)
			}
		}
		var es []store.Event
		if paired {
			es, err = d.ReleaseRead(ctx, thread, holder, seq+1)
		} else if err = d.Release(ctx, thread, holder); err == nil {
			es, err = d.Read(ctx, thread, seq+1)
		}
		if err != nil || len(es) != 0 {
			t.Fatalf("read from %d: %d events, %v", seq+1, len(es), err)
		}
	}
}

// Environment of TestWarmTurnSyscalls's process: how many warm turns it
// makes, and whether paired.
const (
	envTurns  = "LNK_LOG_TEST_TURNS"
	envPaired = "LNK_LOG_TEST_PAIRED"
)

// A warm turn's calls to the log make these file calls, as strace(1)
// counts them in a process of its own: the counts of a process making 40
// turns less those of one making 10, over 30. Six calls: an open of
// lease.json and of events.jsonl at the lease and its let-go, of
// events.jsonl at each other call; a lock a call; a stamp (statx) where
// a call asks what the file holds, and a read only where what it wants
// isn't known from it: the lease's two reads (the read at the turn's
// start of the event the turn before wrote last finds it kept); a write
// a lease and an event.
// Paired (store.LeaseReader), the lease and the read after it are one
// open and one lock, and so are the let-go and the look after it. A call
// more of any fails it.
func TestWarmTurnSyscalls(t *testing.T) {
	if n := os.Getenv(envTurns); n != "" {
		turns, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		turn := warmTurn(t, log.Open(os.Getenv(envChats)), os.Getenv(envPaired) != "")
		for range 3 + turns {
			turn()
		}
		return
	}
	for _, tt := range []struct {
		name   string
		paired bool
		want   map[string]int
	}{
		{"SixCalls", false, map[string]int{"openat": 8, "flock": 6, "statx": 4, "lseek": 0, "pread64": 2, "pwrite64": 4, "close": 8, "fstat": 0, "newfstatat": 0}},
		{"Paired", true, map[string]int{"openat": 6, "flock": 4, "statx": 4, "lseek": 0, "pread64": 2, "pwrite64": 4, "close": 6, "fstat": 0, "newfstatat": 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			few, many := straceTurns(t, 10, tt.paired), straceTurns(t, 40, tt.paired)
			for _, call := range slices.Sorted(maps.Keys(many)) {
				if d := many[call] - few[call]; d >= 30 && call != "total" {
					t.Logf("%s: %.2f a warm turn", call, float64(d)/30)
				}
			}
			for call, n := range tt.want {
				if got := float64(many[call]-few[call]) / 30; got != float64(n) {
					t.Errorf("%s: %.2f a warm turn, want %d", call, got, n)
				}
			}
		})
	}
}

// straceTurns counts the calls of a process of this test making turns
// warm turns, paired or not, by strace -f -c.
func straceTurns(t *testing.T, turns int, paired bool) map[string]int {
	t.Helper()
	env := []string{envChats + "=" + t.TempDir(), envTurns + "=" + strconv.Itoa(turns)}
	if paired {
		env = append(env, envPaired+"=1")
	}
	return stracecount.Count(t, "TestWarmTurnSyscalls", env...)
}

// readCount is how many read calls (read, pread64, readv) the process
// has made, as the kernel counts them; it makes one itself.
func readCount(t *testing.T) int64 {
	t.Helper()
	fd, err := unix.Open("/proc/self/io", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no count of the process's reads here: %v", err)
	}
	defer unix.Close(fd)
	var buf [512]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(buf[:n], []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("syscr: ")); ok {
			c, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("no syscr in /proc/self/io: %q", buf[:n])
	return 0
}

// readsSince is how many read calls were made since the count before.
func readsSince(t *testing.T, before int64) int64 {
	t.Helper()
	return readCount(t) - before
}
