//go:build linux

package delivery

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
)

// callCount counts the calls on names a hold and its let-go make
// (openFile, renameFile, lstat) until the test ends.
type callCount struct{ opens, renames, lstats int }

func countCalls(t *testing.T) *callCount {
	c := &callCount{}
	wasOpen, wasRename, wasLstat := openFile, renameFile, lstat
	openFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		c.opens++
		return wasOpen(name, flag, perm)
	}
	renameFile = func(from, to string) error {
		c.renames++
		return wasRename(from, to)
	}
	lstat = func(name string) (fs.FileInfo, error) {
		c.lstats++
		return wasLstat(name)
	}
	t.Cleanup(func() { openFile, renameFile, lstat = wasOpen, wasRename, wasLstat })
	return c
}

// TestHoldIsWriteAndRename: once a turn has let a hold go, the next
// turn's hold is one write into the spare kept open and one rename, and
// its let-go one rename: no open, no close, no look at the folder. The
// writes are the kernel's own count (syscw in /proc/self/io). The spare
// kept open is the one descriptor the answers hold, and Close closes it.
func TestHoldIsWriteAndRename(t *testing.T) {
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	fds := openFDs(t)
	answerTurn(t, f, nil, "telegram:1", "the first answer", 2, at, true)
	if n := openFDs(t); n != fds+1 {
		t.Errorf("after a turn %d descriptors open, want %d (the spare's)", n, fds+1)
	}
	c := countCalls(t)
	idle := writeCount(t)
	idle = writeCount(t) - idle // the count's own writes
	for i := range 5 {
		before, was := writeCount(t), *c
		text := "answer " + strconv.Itoa(i)
		id, done := holdTurn(t, f, nil, "telegram:1", text, int64(4+2*i), at.Add(time.Duration(i)*time.Minute))
		writes := writeCount(t) - before - idle
		if c.opens != was.opens || c.lstats != was.lstats || c.renames != was.renames+1 || writes != 1 {
			t.Errorf("hold %d: %d opens, %d looks at the folder, %d renames, %d writes; want 0, 0, 1, 1",
				i, c.opens-was.opens, c.lstats-was.lstats, c.renames-was.renames, writes)
		}
		all, err := f.Sending(context.Background())
		if err != nil || len(all) != 1 || all[0].ID != id || all[0].Text != text {
			t.Fatalf("sending %+v, %v: want %s's %q", all, err, id, text)
		}
		was = *c
		done()
		if holds, spares := sendingFiles(t, p); len(holds) != 0 || len(spares) != 1 {
			t.Fatalf("after let-go %d: holds %v, spares %v; want one spare", i, holds, spares)
		}
		if c.opens != was.opens || c.lstats != was.lstats || c.renames != was.renames+1 {
			t.Errorf("let-go %d: %d opens, %d looks, %d renames; want 0, 0, 1", i, c.opens-was.opens, c.lstats-was.lstats, c.renames-was.renames)
		}
	}
	if n := openFDs(t); n != fds+1 {
		t.Errorf("after the turns %d descriptors open, want %d (the spare's)", n, fds+1)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t); n != fds {
		t.Errorf("after Close %d descriptors open, want %d", n, fds)
	}
}

// TestSpareKeptOpenThenLink: a spare kept open is written where it is
// open, with no look at the folder; when chats/sending has since become a
// link to another agent's folder, the hold's rename finds no spare
// there, and the hold made anew is refused as one through a link:
// nothing of the other's changes, and no answer of this agent's is there.
func TestSpareKeptOpenThenLink(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	answerTurn(t, f, nil, "telegram:1", "the first answer", 2, at, true)

	work := agent(t)
	theirs := &Answers{Paths: work}
	if err := theirs.Hold(ctx, Answer{ID: mustID(t, "telegram:7"), Thread: "telegram:7", Text: "work's private answer"}, false); err != nil {
		t.Fatal(err)
	}
	theirDir := filepath.Join(work.Chats(), SendingDir)
	before, _ := os.ReadDir(theirDir)
	mine := filepath.Join(p.Chats(), SendingDir)
	if err := os.Rename(mine, mine+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirDir, mine); err != nil {
		t.Fatal(err)
	}
	err := f.Hold(ctx, Answer{ID: mustID(t, "telegram:1"), Thread: "telegram:1", Text: "main's second answer"}, false)
	if !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("held with the folder a link: %v, want it refused", err)
	}
	after, _ := os.ReadDir(theirDir)
	if len(after) != len(before) || after[0].Name() != before[0].Name() {
		t.Fatalf("the other agent's sending folder changed: %v, was %v", after, before)
	}
	b, err := os.ReadFile(filepath.Join(theirDir, after[0].Name()))
	if err != nil || bytes.Contains(b, []byte("main's")) {
		t.Fatalf("the other's hold reads %q, %v", b, err)
	}
}

// openFDs is how many descriptors the process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no list of descriptors here: %v", err)
	}
	return len(entries) - 1 // the listing's own
}

// writeCount is how many write calls (write, pwrite64, writev) the
// process has made, as the kernel counts them.
func writeCount(t *testing.T) int64 {
	t.Helper()
	fd, err := unix.Open("/proc/self/io", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no count of the process's writes here: %v", err)
	}
	defer unix.Close(fd)
	var buf [512]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(buf[:n], []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("syscw: ")); ok {
			c, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("no syscw in /proc/self/io: %q", buf[:n])
	return 0
}
