//go:build linux && (amd64 || arm64)

package fsx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// unflushed is how many of f's pages are dirty or being written back
// (cachestat(2), Linux 6.5 on): what a sync has left to flush. The test
// is skipped where the kernel has no cachestat, or where the file
// system keeps no pages to write back (tmpfs): a sync there has nothing
// to do, and nothing here shows whether it did it.
func unflushed(t *testing.T, f *os.File) uint64 {
	t.Helper()
	var st unix.Cachestat_t
	err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &st, 0)
	if errors.Is(err, unix.ENOSYS) {
		t.Skip("no cachestat(2) in this kernel: what a sync leaves can't be seen")
	}
	if err != nil {
		t.Fatalf("cachestat %s: %v", f.Name(), err)
	}
	return st.Dirty + st.Writeback
}

// writeDirty makes name, writes size bytes to it and returns it open,
// its pages dirty; the test is skipped where written pages aren't left
// for a sync (see unflushed).
func writeDirty(t *testing.T, name string, size int) *os.File {
	t.Helper()
	f, err := Open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(bytes.Repeat([]byte("event\n"), size/6)); err != nil {
		t.Fatal(err)
	}
	if unflushed(t, f) == 0 {
		t.Skipf("%s's file system left no page to flush after a write", filepath.Dir(name))
	}
	return f
}

// TestDatasyncFlushes: after Datasync (of an *os.File and of a File), and
// after Fsync, no page of what
// was written is left dirty or being written back: alone (fdatasync(2)
// itself), while another flush is under way (by AIO, where the kernel
// has it: the test says if not), and for 64 files synced at once.
func TestDatasyncFlushes(t *testing.T) {
	if aio() == nil {
		t.Log("the kernel refused AIO: fdatasync(2) and fsync(2) tested")
	}
	dir := t.TempDir()
	for _, sync := range []struct {
		name string
		f    func(*os.File) error
	}{
		{"Datasync", func(f *os.File) error { return Datasync(f) }},
		{"Fsync", func(f *os.File) error { return Fsync(f) }},
		{"DatasyncFile", func(f *os.File) error {
			// The same file open again as a File: its pages are the inode's.
			ff, err := OpenFile(f.Name(), os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer ff.Close()
			return Datasync(ff)
		}},
	} {
		for _, busy := range []bool{false, true} {
			name := sync.name + map[bool]string{false: "Alone", true: "Busy"}[busy]
			t.Run(name, func(t *testing.T) {
				f := writeDirty(t, filepath.Join(dir, name), 1<<20)
				asked := aioAsked()
				if busy {
					inFlight.Add(1) // another flush under way
					defer inFlight.Add(-1)
				}
				if err := sync.f(f); err != nil {
					t.Fatal(err)
				}
				if n := unflushed(t, f); n != 0 {
					t.Fatalf("%d pages not on the disk after %s", n, sync.name)
				}
				if byAIO := aioAsked() > asked; byAIO != (busy && aio() != nil) {
					t.Errorf("flushed by AIO: %v, want %v", byAIO, busy && aio() != nil)
				}
			})
		}
	}
	t.Run("AtOnce", func(t *testing.T) {
		files := make([]*os.File, 64)
		for i := range files {
			files[i] = writeDirty(t, filepath.Join(dir, "at-once-"+strconv.Itoa(i)), 16<<10)
		}
		errs := make([]error, len(files))
		var wg sync.WaitGroup
		for i, f := range files {
			wg.Go(func() { errs[i] = Datasync(f) })
		}
		wg.Wait()
		for i, f := range files {
			if errs[i] != nil {
				t.Errorf("%s: %v", f.Name(), errs[i])
			} else if n := unflushed(t, f); n != 0 {
				t.Errorf("%s: %d pages not on the disk after Datasync", f.Name(), n)
			}
		}
	})
}

// aioAsked is how many flushes were asked of the kernel by AIO so far.
func aioAsked() uint64 {
	s := aio()
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// TestDatasyncRefused: a file that can't be flushed (a pipe's end) is
// an error naming it, not a sync.
func TestDatasyncRefused(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, busy := range []bool{false, true} {
		if busy {
			inFlight.Add(1) // by AIO, which refuses it at io_submit
		}
		for _, sync := range []func(Handle) error{Datasync, Fsync} {
			err := sync(w)
			if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), w.Name()) {
				t.Errorf("sync of a pipe (another flush under way: %v): %v, want EINVAL naming it", busy, err)
			}
		}
		if busy {
			inFlight.Add(-1)
		}
	}
}

// TestDatasyncCompletionsUnread: when io_getevents fails, the flush
// waiting on it is done by fdatasync(2) instead and returns no error, its
// pages on the disk; later flushes skip AIO; the process goes on.
func TestDatasyncCompletionsUnread(t *testing.T) {
	s := setUpSyncer()
	if s == nil {
		t.Skip("the kernel refused AIO")
	}
	failed := make(chan struct{})
	s.getEvents = func(int, []ioEvent, *unix.Timespec) (int, syscall.Errno) {
		close(failed)
		return 0, unix.EINVAL
	}
	go s.reap()
	f := writeDirty(t, filepath.Join(t.TempDir(), "events.jsonl"), 1<<20)
	if err := syncVia(s, f, iocbCmdFdsync); err != nil {
		t.Fatalf("a flush whose completion can't be read: %v, want it done by fdatasync(2)", err)
	}
	<-failed
	if n := unflushed(t, f); n != 0 {
		t.Fatalf("%d pages not on the disk after Datasync", n)
	}
	asked := s.next
	g := writeDirty(t, filepath.Join(t.TempDir(), "events.jsonl"), 1<<20)
	if err := syncVia(s, g, iocbCmdFdsync); err != nil {
		t.Fatal(err)
	}
	if n := unflushed(t, g); n != 0 {
		t.Fatalf("%d pages not on the disk after the next Datasync", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next != asked {
		t.Errorf("%d flushes asked by AIO after its completions couldn't be read", s.next-asked)
	}
}
