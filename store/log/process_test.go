package log_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// Environment of a helper process: the conversations folder it writes,
// its name, and how many events it appends.
const (
	envChats  = "LNK_LOG_TEST_CHATS"
	envWriter = "LNK_LOG_TEST_WRITER"
	envCount  = "LNK_LOG_TEST_COUNT"
)

// TestProcesses runs writers in processes of their own on one
// conversation, each appending under the lease as a turn does. The lease
// and the lock hold across processes: a writer holding the lease always
// finds its next number free, and no event is lost or doubled.
func TestProcesses(t *testing.T) {
	const writers, each = 4, 10
	chats := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmds := make([]*exec.Cmd, writers)
	outs := make([]bytes.Buffer, writers)
	for w := range cmds {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChats+"="+chats, envWriter+"="+strconv.Itoa(w), envCount+"="+strconv.Itoa(each))
		cmd.Stdout, cmd.Stderr = &outs[w], &outs[w]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w].Bytes())
		}
	}
	es, err := log.Open(chats).Read(context.Background(), "telegram:42", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != writers*each {
		t.Fatalf("%d events, want %d", len(es), writers*each)
	}
	perWriter := map[string]int{}
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d at %d", e.Seq, i)
		}
		perWriter[e.From]++
	}
	for w := range writers {
		if n := perWriter[fmt.Sprint("writer-", w)]; n != each {
			t.Errorf("writer %d has %d events, want %d", w, n, each)
		}
	}
}

// TestHelperWriter is a writer of TestProcesses, run only in a process
// of its own.
func TestHelperWriter(t *testing.T) {
	chats := os.Getenv(envChats)
	if chats == "" {
		t.Skip("a helper of TestProcesses")
	}
	name := "writer-" + os.Getenv(envWriter)
	count, _ := strconv.Atoi(os.Getenv(envCount))
	d := log.Open(chats)
	ctx := context.Background()
	for written := 0; written < count; {
		var err error
		testwait.For(t, 30*time.Second, fmt.Sprintf("%s's lease, %d of %d written", name, written, count), func() bool {
			_, err = d.Lease(ctx, "telegram:42", name, 10*time.Second)
			return !errors.Is(err, store.ErrLeaseHeld)
		})
		if err != nil {
			t.Fatal(err)
		}
		next, err := store.Next(ctx, d, "telegram:42")
		if err != nil {
			t.Fatal(err)
		}
		e := storetest.Event(next, name)
		e.Kind, e.From = store.KindMessage, name
		if err := d.Append(ctx, "telegram:42", e); err != nil {
			t.Fatalf("%s holds the lease, yet: %v", name, err)
		}
		written++
		if err := d.Release(ctx, "telegram:42", name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeaseClock takes over a lease by the driver's clock alone.
func TestLeaseClock(t *testing.T) {
	ctx := context.Background()
	d := log.Open(t.TempDir())
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	d.Now = func() time.Time { return now }
	l, err := d.Lease(ctx, "default", "h1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(time.Minute); !l.Expires.Equal(want) {
		t.Fatalf("expires %v, want %v", l.Expires, want)
	}
	now = now.Add(59 * time.Second)
	if _, err := d.Lease(ctx, "default", "h2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease for h2 a second before h1's expires: %v, want ErrLeaseHeld", err)
	}
	now = now.Add(time.Second)
	if _, err := d.Lease(ctx, "default", "h2", time.Minute); err != nil {
		t.Fatalf("lease for h2 as h1's expires: %v", err)
	}
	if _, err := d.Lease(ctx, "default", "h1", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease for h1 after h2 took it: %v, want ErrLeaseHeld", err)
	}
}
