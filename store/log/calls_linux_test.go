//go:build linux

package log_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// A warm turn's calls to the log (the lease taken, the events read, the
// message and its answer appended, the lease let go, the events read
// again) open events.jsonl once a call and read the disk once a call:
// the log's last lines and where its complete lines end in one read,
// the lease in one. An open or a read a call more fails it: the reads
// are the kernel's own count (syscr in /proc/self/io).
func TestWarmTurnCalls(t *testing.T) {
	ctx := context.Background()
	d := log.Open(t.TempDir())
	const thread, holder = "link:calls", "h"
	seq := int64(0)
	turn := func() {
		t.Helper()
		if _, err := d.Lease(ctx, thread, holder, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Read(ctx, thread, max(seq, 1)); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			seq++
			if err := d.Append(ctx, thread, storetest.Event(seq, "calls")); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Release(ctx, thread, holder); err != nil {
			t.Fatal(err)
		}
		if es, err := d.Read(ctx, thread, seq); err != nil || len(es) != 1 {
			t.Fatalf("read from %d: %d events, %v", seq, len(es), err)
		}
	}
	for range 3 {
		turn() // the conversation begun, its files made
	}
	opened := log.CountOpens(t)
	idle := readsSince(t, readCount(t)) // the count's own read
	for range 5 {
		before := readCount(t)
		opens := opened()
		turn()
		if reads := readsSince(t, before) - idle; reads != 6 {
			t.Errorf("a warm turn made %d reads, want 6 (one a call)", reads)
		}
		if n := opened() - opens; n != 6 {
			t.Errorf("a warm turn opened events.jsonl %d times, want 6 (one a call)", n)
		}
	}
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
