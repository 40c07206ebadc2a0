//go:build linux

package delivery

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/internal/stracecount"
	"github.com/lnk-dev/link/store"
)

// TestHoldIsOneWrite: once a turn has let a hold go, the conversation's
// next hold is one write into the spare kept open under its name, and
// its let-go one rename: no open, no close, no look at the folder
// (TestHoldSyscalls counts the kernel's calls). The spare kept open is
// the one descriptor the answers hold, and Close closes it.
func TestHoldIsOneWrite(t *testing.T) {
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	answerTurn(t, f, nil, "telegram:1", "the first answer", 2, at, true)
	if n := openFDs(t, p); n != 1 {
		t.Errorf("after a turn %d descriptors open, want 1 (the spare's)", n)
	}
	c := countCalls(t)
	for i := range 5 {
		was := *c
		text := "answer " + strconv.Itoa(i)
		id, done := holdTurn(t, f, nil, "telegram:1", text, int64(4+2*i), at.Add(time.Duration(i)*time.Minute))
		if c.opens != was.opens || c.lstats != was.lstats || c.renames != was.renames {
			t.Errorf("hold %d: %d opens, %d looks at the folder, %d renames; want none",
				i, c.opens-was.opens, c.lstats-was.lstats, c.renames-was.renames)
		}
		all, err := f.Sending(context.Background())
		if err != nil || len(all) != 1 || all[0].ID != id || all[0].Text != text {
			t.Fatalf("sending %+v, %v: want %s's %q", all, err, id, text)
		}
		was = *c
		done()
		if c.opens != was.opens || c.lstats != was.lstats || c.renames != was.renames+1 {
			t.Errorf("let-go %d: %d opens, %d looks, %d renames; want 0, 0, 1", i, c.opens-was.opens, c.lstats-was.lstats, c.renames-was.renames)
		}
		if holds, spares := sendingFiles(t, p); len(holds) != 0 || len(spares) != 1 {
			t.Fatalf("after let-go %d: holds %v, spares %v; want one spare", i, holds, spares)
		}
	}
	if n := openFDs(t, p); n != 1 {
		t.Errorf("after the turns %d descriptors open, want 1 (the spare's)", n)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t, p); n != 0 {
		t.Errorf("after Close %d descriptors open, want none", n)
	}
}

// envTurns, set, makes TestHoldSyscalls the process counted: that many
// turns' holds and let-goes, in the agent folder envHome names.
const envTurns, envHome = "LNK_TEST_HOLD_TURNS", "LNK_TEST_HOLD_HOME"

// TestHoldSyscalls: a turn's hold and let-go, once its conversation has
// a spare, are one pwrite, one fstat (the spare still has a name) and one
// rename, by strace -f -c's count (40 turns less 10): no open, close,
// fcntl or look at the folder.
func TestHoldSyscalls(t *testing.T) {
	if n := os.Getenv(envTurns); n != "" {
		turns, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		p, err := store.For(os.Getenv(envHome), "main")
		if err != nil {
			t.Fatal(err)
		}
		f := &Answers{Paths: p}
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		for i := range turns {
			answerTurn(t, f, nil, "telegram:1", "an answer", int64(2+2*i), at, true)
		}
		return
	}
	count := func(turns int) map[string]int {
		return stracecount.Count(t, "TestHoldSyscalls", envHome+"="+t.TempDir(), envTurns+"="+strconv.Itoa(turns))
	}
	few, many := count(10), count(40)
	// A stat of the spare's descriptor is fstat(2), or newfstatat(2) of
	// it where there is no fstat (arm64); of a name, newfstatat alone.
	for _, c := range []map[string]int{few, many} {
		c["fstat"] += c["newfstatat"]
	}
	want := map[string]int{"pwrite64": 1, "fstat": 1, "renameat": 1, "openat": 0, "close": 0, "fcntl": 0, "write": 0}
	for call, n := range want {
		if got := float64(many[call]-few[call]) / 30; got != float64(n) {
			t.Errorf("%s: %.2f a turn, want %d", call, got, n)
		}
	}
}

// TestSpareKeptOpenThenLink: a spare kept open is written where it is
// open, with no look at the folder. When chats/sending has since become
// a link to another agent's folder, a hold of its own conversation goes
// into that file, where it was made; one of another conversation finds
// no spare of that name through the link to rename, and the hold made
// anew is refused as one through a link. Nothing of the other agent's
// changes, and no answer of this agent's is there.
func TestSpareKeptOpenThenLink(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	_, done1 := holdTurn(t, f, nil, "telegram:1", "the first answer", 2, at)
	_, done2 := holdTurn(t, f, nil, "telegram:1", "the second answer", 4, at) // two at once: two spares
	done1()
	done2()

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
	for _, thread := range []string{"telegram:1", "telegram:2"} {
		id, into, err := f.spareFor(thread)
		if err != nil || into == nil {
			t.Fatalf("no spare for %s: %v", thread, err)
		}
		h, err := f.hold(ctx, Answer{ID: id, Thread: thread, Text: "main's answer"}, false, into)
		h.close()
		switch {
		case thread == "telegram:1" && err != nil:
			t.Errorf("%s's own spare: %v, want it written where it is open", thread, err)
		case thread == "telegram:2" && !errors.Is(err, fsx.ErrSymlink):
			t.Errorf("%s through the link: %v, want it refused", thread, err)
		}
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

// openFDs is how many descriptors the process has open on files of the
// agents' chats/sending folders (those of other tests, which the
// collector may close meanwhile, not counted).
func openFDs(t *testing.T, agents ...store.Paths) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no list of descriptors here: %v", err)
	}
	n := 0
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue // the listing's own, closed since
		}
		for _, p := range agents {
			if strings.HasPrefix(target, filepath.Join(p.Chats(), SendingDir)+string(filepath.Separator)) {
				n++
			}
		}
	}
	return n
}

// TestOpenSparesBounded: the spares kept open between holds, of every
// agent of the process, are at most maxOpenSpares; one past it is kept
// closed, and its conversation's next hold opens it by its name. Close
// closes what each agent kept.
func TestOpenSparesBounded(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	before := openSpares.Load()
	agents := []*Answers{{Paths: agent(t)}, {Paths: agent(t)}}
	const each = maxOpenSpares/2 + 20
	for _, f := range agents {
		dones := make([]func(), each)
		for i := range dones {
			_, dones[i] = holdTurn(t, f, nil, "telegram:"+strconv.Itoa(i), "an answer", 2, at)
		}
		for _, done := range dones {
			done()
		}
	}
	if n := openSpares.Load(); n != maxOpenSpares {
		t.Errorf("%d spares kept open, want %d", n, maxOpenSpares)
	}
	if n := openFDs(t, agents[0].Paths, agents[1].Paths); n != int(maxOpenSpares-before) {
		t.Errorf("%d descriptors open, want %d", n, maxOpenSpares-before)
	}
	c := countCalls(t)
	last := "telegram:" + strconv.Itoa(each-1) // the second agent's last let go: past the bound
	id := answerTurn(t, agents[1], nil, last, "the next answer", 4, at, false)
	if c.opens != 1 || c.renames != 0 {
		t.Errorf("the hold into a spare kept closed: %d opens, %d renames; want 1 and 0", c.opens, c.renames)
	}
	if all, err := agents[1].Sending(context.Background()); err != nil || len(all) != 1 || all[0].ID != id {
		t.Errorf("sending %+v, %v: want the hold", all, err)
	}
	for _, f := range agents {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := openSpares.Load(); n != before {
		t.Errorf("after Close %d spares kept open, want %d", n, before)
	}
	if n := openFDs(t, agents[0].Paths, agents[1].Paths); n != 1 {
		t.Errorf("after Close %d descriptors open, want 1 (the hold still sent)", n)
	}
}
