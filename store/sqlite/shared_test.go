package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
)

// Two drivers on one file, as two processes would have, racing to append
// the same number: each time, exactly one wins and the rest are told the
// number is taken.
func TestTwoDriversRaceOneSeq(t *testing.T) {
	chats := t.TempDir()
	ds := []*Driver{open(t, chats), open(t, chats)}
	const rounds, each = 20, 3 // writers per driver
	ctx := context.Background()
	for seq := int64(1); seq <= rounds; seq++ {
		start := make(chan struct{})
		errs := make(chan error, len(ds)*each)
		var wg sync.WaitGroup
		for i, d := range ds {
			for j := range each {
				wg.Go(func() {
					<-start
					errs <- d.Append(ctx, "telegram:42", event(seq, fmt.Sprintf("writer %d.%d", i, j)))
				})
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrSeqTaken):
				t.Fatalf("append #%d: %v, want nil or ErrSeqTaken", seq, err)
			}
		}
		if won != 1 {
			t.Fatalf("append #%d: %d writers won, want 1", seq, won)
		}
	}
	for _, d := range ds {
		es, err := d.Read(ctx, "telegram:42", 1)
		if err != nil || !reflect.DeepEqual(seqs(es), span(1, rounds)) {
			t.Fatalf("read: %v, %v; want 1..%d", seqs(es), err, rounds)
		}
	}
}

// Two drivers on one file contending for one lease: one has it, the others
// are told who does, and once it's released another takes it.
func TestTwoDriversContendLease(t *testing.T) {
	chats := t.TempDir()
	ds := []*Driver{open(t, chats), open(t, chats)}
	ctx := context.Background()
	const each = 4
	type result struct {
		holder string
		l      store.Lease
		err    error
	}
	results := make(chan result, len(ds)*each)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, d := range ds {
		for j := range each {
			holder := fmt.Sprintf("process %d turn %d", i, j)
			wg.Go(func() {
				<-start
				l, err := d.Lease(ctx, "default", holder, time.Minute)
				results <- result{holder, l, err}
			})
		}
	}
	close(start)
	wg.Wait()
	close(results)
	var winner string
	var lost []result
	for r := range results {
		switch {
		case r.err == nil:
			if winner != "" {
				t.Fatalf("both %q and %q have the lease", winner, r.holder)
			}
			winner = r.holder
		case errors.Is(r.err, store.ErrLeaseHeld):
			lost = append(lost, r)
		default:
			t.Fatalf("lease for %s: %v", r.holder, r.err)
		}
	}
	if winner == "" {
		t.Fatal("no one has the lease")
	}
	for _, r := range lost {
		if r.l.Holder != winner {
			t.Fatalf("%s was told %q holds the lease, not %q", r.holder, r.l.Holder, winner)
		}
	}
	// The winner releases through the one driver; the other driver sees it free.
	if err := ds[0].Release(ctx, "default", winner); err != nil {
		t.Fatal(err)
	}
	if l, err := ds[1].Lease(ctx, "default", "next", time.Minute); err != nil || l.Holder != "next" {
		t.Fatalf("lease after release: %+v, %v", l, err)
	}
	if _, err := ds[0].Lease(ctx, "default", winner, time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease after another took it: %v, want ErrLeaseHeld", err)
	}
}

// Drivers opening a new file at once all open it: one makes the tables,
// the others wait for it and find them.
func TestOpenAtOnce(t *testing.T) {
	chats := t.TempDir()
	const n = 4
	ds := make([]*Driver, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ds[i], errs[i] = Open(chats) })
	}
	wg.Wait()
	for i, d := range ds {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { d.Close() })
	}
	for i, d := range ds {
		appendN(t, d, "default", int64(i+1), int64(i+1), "x")
	}
	if es, err := ds[0].Read(context.Background(), "default", 1); err != nil || !reflect.DeepEqual(seqs(es), span(1, n)) {
		t.Fatalf("read: %v, %v", seqs(es), err)
	}
}

// The environment of a test binary started by TestTwoProcesses: the
// conversations folder to append to, and how many events to write.
const (
	childChats = "LNK_SQLITE_TEST_CHATS"
	childCount = "LNK_SQLITE_TEST_COUNT"
)

// A second OS process appends to the same file while this one does, each
// taking the next number as it finds it: every event each one was told it
// wrote is there, once, and the numbers run 1 to the total with none twice.
func TestTwoProcesses(t *testing.T) {
	if chats := os.Getenv(childChats); chats != "" {
		n, err := strconv.Atoi(os.Getenv(childCount))
		if err != nil {
			t.Fatal(err)
		}
		d := open(t, chats)
		// Ready, then wait for the parent's go, so the two append at once.
		if err := os.WriteFile(filepath.Join(chats, "ready"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := waitFile(filepath.Join(chats, "go"), 30*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := appendTaking(context.Background(), d, "child", n); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts a process")
	}
	const n = 150
	chats := t.TempDir()
	d := open(t, chats)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestTwoProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), childChats+"="+chats, childCount+"="+strconv.Itoa(n))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitFile(filepath.Join(chats, "ready"), 30*time.Second); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child process: %v\n%s", err, out.Bytes())
	}
	if err := os.WriteFile(filepath.Join(chats, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	perr := appendTaking(ctx, d, "parent", n)
	werr := cmd.Wait()
	if perr != nil {
		t.Fatal(perr)
	}
	if werr != nil {
		t.Fatalf("child process: %v\n%s", werr, out.Bytes())
	}
	es, err := d.Read(ctx, "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs(es), span(1, 2*n)) {
		t.Fatalf("read %d events %v, want 1..%d", len(es), seqs(es), 2*n)
	}
	byWriter := map[string]int{}
	for _, e := range es {
		byWriter[e.From]++
	}
	if byWriter["parent"] != n || byWriter["child"] != n {
		t.Fatalf("events by writer %v, want %d each", byWriter, n)
	}
	t.Logf("interleaving: %d switches of writer in %d events", switches(es), len(es))
}

// appendTaking appends n events from writer to the default thread, each
// at the next number it finds, trying again when another took it.
func appendTaking(ctx context.Context, d *Driver, writer string, n int) error {
	for wrote := 0; wrote < n; {
		next, err := store.Next(ctx, d, "default")
		if err != nil {
			return err
		}
		e := event(next, fmt.Sprintf("%s's %d", writer, wrote+1))
		e.From = writer
		switch err := d.Append(ctx, "default", e); {
		case err == nil:
			wrote++
		case !errors.Is(err, store.ErrSeqTaken):
			return err
		}
	}
	return nil
}

// waitFile waits until the file at path is there, or gives up after d.
func waitFile(path string, d time.Duration) error {
	return testwait.Err(d, path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

func switches(es []store.Event) int {
	n := 0
	for i := 1; i < len(es); i++ {
		if es[i].From != es[i-1].From {
			n++
		}
	}
	return n
}
