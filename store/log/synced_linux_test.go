//go:build linux

package log_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// unflushed is how many pages of name are dirty or being written back
// (cachestat(2), Linux 6.5 on): what a sync would have left to flush.
func unflushed(t *testing.T, name string) uint64 {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Cachestat_t
	err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &st, 0)
	if errors.Is(err, unix.ENOSYS) {
		t.Skip("no cachestat(2) in this kernel: whether an append was flushed can't be seen")
	}
	if err != nil {
		t.Fatalf("cachestat %s: %v", name, err)
	}
	return st.Dirty + st.Writeback
}

// TestAppendFlushed: an event is on the disk when Append returns, before
// anyone is told it was written: no page of events.jsonl is left dirty
// or being written back, for a conversation's first event and the
// next, in 32 conversations appended to at once. Skipped on a file
// system that keeps no pages to write back (tmpfs), where a sync has
// nothing to do.
func TestAppendFlushed(t *testing.T) {
	ctx := context.Background()
	chats := t.TempDir()
	probe := filepath.Join(chats, "probe")
	if err := os.WriteFile(probe, []byte("a page to write back\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if unflushed(t, probe) == 0 {
		t.Skipf("%s's file system left no page to flush after a write", chats)
	}
	d := log.Open(chats)
	errs := make([]error, 32)
	var wg sync.WaitGroup
	for g := range errs {
		wg.Go(func() {
			thread := "telegram:" + strconv.Itoa(g)
			name, _ := contract.ThreadFolder(thread)
			events := filepath.Join(chats, name, log.EventsFile)
			for seq := int64(1); seq <= 3; seq++ {
				if err := d.Append(ctx, thread, storetest.Event(seq, "flushed")); err != nil {
					errs[g] = err
					return
				}
				if n := unflushed(t, events); n != 0 {
					errs[g] = errors.New(thread + "'s event " + strconv.FormatInt(seq, 10) + ": " +
						strconv.FormatUint(n, 10) + " pages not on the disk when Append returned")
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
