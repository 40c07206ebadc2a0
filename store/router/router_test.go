package router_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/sqlite"
	"github.com/lnk-dev/link/store/storetest"
)

// A router is a driver like any other: the one suite passes through it,
// for each way a new conversation begins.
func TestRouterSuite(t *testing.T) {
	for _, kind := range []string{log.Name, compact.Name, sqlite.Name} {
		t.Run(kind, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Conversations {
				return fixture.Router(t, fixture.Agent(t), kind)
			})
		})
	}
}

func TestRouterBeginsAndDetects(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	es := fixture.Conversation(2, "a")

	// A log begun before the spec said sqlite stays a log.
	fixture.AppendAll(t, ds[log.Name], "telegram:1", es)
	r, err := router.New(p, sqlite.Name, ds)
	if err != nil {
		t.Fatal(err)
	}
	fixture.AppendAll(t, r, "telegram:2", es)
	fixture.AppendAll(t, ds[compact.Name], "telegram:3", es)

	for th, want := range map[string]string{"telegram:1": log.Name, "telegram:2": sqlite.Name, "telegram:3": compact.Name, "telegram:4": sqlite.Name} {
		kind, err := r.Kind(th)
		if err != nil || kind != want {
			t.Errorf("kind of %s: %q, %v; want %q", th, kind, err, want)
		}
	}
	// The new one has its marker, and its events are sqlite's alone.
	dir, _ := p.Conversation("telegram:2")
	if _, err := os.Stat(filepath.Join(dir, driver.MarkerPrefix+sqlite.Name)); err != nil {
		t.Fatalf("no marker: %v", err)
	}
	fixture.SameLines(t, "sqlite's own", fixture.ReadAll(t, ds[sqlite.Name], "telegram:2"), es)
	if got := fixture.ReadAll(t, ds[log.Name], "telegram:2"); len(got) != 0 {
		t.Fatalf("the log holds %d events of a sqlite conversation", len(got))
	}
	// Each reads through the router from where it is.
	for _, th := range []string{"telegram:1", "telegram:2", "telegram:3"} {
		fixture.SameLines(t, th, fixture.ReadAll(t, r, th), es)
		next, err := store.Next(ctx, r, th)
		if err != nil || next != int64(len(es)+1) {
			t.Fatalf("next of %s: %d, %v", th, next, err)
		}
	}
	threads, err := r.Threads(ctx)
	if err != nil || !reflect.DeepEqual(threads, []string{"telegram:1", "telegram:2", "telegram:3"}) {
		t.Fatalf("threads: %v, %v", threads, err)
	}
}

// A folder holding only what isn't an event (tools narrowed, a lease taken
// before the first message) is a conversation not begun: it begins the
// spec's way, not as a log.
func TestRouterFolderWithoutEvents(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	for _, kind := range []string{compact.Name, sqlite.Name} {
		r := fixture.Router(t, p, kind)
		th := "link:" + kind
		f := &folder.Files{Paths: p}
		if _, err := f.NarrowTools(ctx, th, &[]string{"memory__search"}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Lease(ctx, th, "turn", 60e9); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Kind(th); got != kind {
			t.Fatalf("%s: a folder without events is %q", kind, got)
		}
		fixture.AppendAll(t, r, th, fixture.Conversation(1, kind))
		dir, _ := p.Conversation(th)
		if got, err := driver.Of(dir); got != kind || err != nil {
			t.Fatalf("detect after the first event: %q, %v; want %q", got, err, kind)
		}
		if err := r.Release(ctx, th, "turn"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRouterRefuses(t *testing.T) {
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	if _, err := router.New(p, "postgres", ds); !errors.Is(err, driver.ErrNoDriver) {
		t.Fatalf("a new kind without its driver: %v", err)
	}
	for _, bad := range []string{"Log", "sq lite", "../x"} {
		if _, err := router.New(p, bad, ds); err == nil {
			t.Errorf("kind %q: no error", bad)
		}
	}
	// A conversation marked by a driver the router wasn't given.
	dir, _ := p.Conversation("telegram:9")
	if err := driver.Mark(dir, "gcs"); err != nil {
		t.Fatal(err)
	}
	r := fixture.Router(t, p, log.Name)
	if _, err := r.Read(context.Background(), "telegram:9", 1); !errors.Is(err, driver.ErrNoDriver) {
		t.Fatalf("read of a gcs conversation without gcs: %v", err)
	}
}

// Detecting at each call against calling the driver alone: the cost of
// holding nothing between calls.
func BenchmarkRouterLatest(b *testing.B) {
	p := fixture.Agent(b)
	ds := fixture.Drivers(b, p)
	fixture.AppendAll(b, ds[log.Name], "telegram:1", fixture.Conversation(50, "a"))
	r, _ := router.New(p, log.Name, ds)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		conv store.Conversations
	}{{"driver", ds[log.Name]}, {"router", r}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := store.Latest(ctx, c.conv, "telegram:1", 32); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("detect", func(b *testing.B) {
		dir, _ := p.Conversation("telegram:1")
		for b.Loop() {
			if _, err := driver.Of(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A conversation not begun is pinned to the driver that begins it as its
// first lease is taken where that driver keeps its events in the folder
// (the log, compact), and its events go there; begun by a store driver,
// it is the router's until its first event, which writes its marker.
func TestPinNotBegun(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	for kind, atLease := range map[string]string{log.Name: log.Name, compact.Name: compact.Name, sqlite.Name: ""} {
		r := fixture.Router(t, p, kind)
		th := "link:pin-" + kind
		pin := r.Pin(th)
		if err := pin.Lease(ctx, "turn", 60e9); err != nil {
			t.Fatal(err)
		}
		if got := pin.Kind(); got != atLease {
			t.Fatalf("%s: pinned as %q at its first lease, want %q", kind, got, atLease)
		}
		es := fixture.Conversation(1, kind)
		fixture.AppendAll(t, pin.Keeper(), th, es)
		if err := pin.Begun(); err != nil {
			t.Fatal(err)
		}
		if got := pin.Kind(); got != kind {
			t.Fatalf("%s: pinned as %q once begun", kind, got)
		}
		dir, _ := p.Conversation(th)
		if got, err := driver.Of(dir); got != kind || err != nil {
			t.Fatalf("%s: its folder says %q, %v", kind, got, err)
		}
		fixture.SameLines(t, kind, fixture.ReadAll(t, r, th), es)
		if err := pin.Release(ctx, "turn"); err != nil {
			t.Fatal(err)
		}
		if pin.Kind() != "" {
			t.Fatalf("%s: pinned after the lease went", kind)
		}
	}
}

// A pinned conversation's lease taken with a read pins the driver that
// keeps it and reads its events from the number asked, through that
// driver in one call where it can (the log's LeaseReader), else the two;
// one held by another is refused with nothing read; let go with a read,
// it reads what came since and is the router's again, the lease free. A
// conversation not begun, leased through the router, reads as none.
func TestPinLeaseRead(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	for _, kind := range []string{log.Name, compact.Name, sqlite.Name} {
		r := fixture.Router(t, p, kind)
		th := "link:lease-read-" + kind
		es := fixture.Conversation(3, kind)
		fixture.AppendAll(t, r, th, es[:len(es)-1])
		pin := r.Pin(th)
		got, err := pin.LeaseRead(ctx, "turn", 60e9, 2)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		fixture.SameLines(t, kind+": lease and read from 2", got, es[1:len(es)-1])
		if pin.Kind() != kind {
			t.Fatalf("%s: pinned as %q", kind, pin.Kind())
		}
		if got, err := r.Pin(th).LeaseRead(ctx, "other", 60e9, 1); !errors.Is(err, store.ErrLeaseHeld) || got != nil {
			t.Fatalf("%s: another's lease and read: %d events, %v; want ErrLeaseHeld", kind, len(got), err)
		}
		last := es[len(es)-1]
		fixture.AppendAll(t, pin.Keeper(), th, es[len(es)-1:])
		if got, err = pin.ReleaseRead(ctx, "turn", last.Seq); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		fixture.SameLines(t, kind+": release and read", got, es[len(es)-1:])
		if pin.Kind() != "" {
			t.Fatalf("%s: pinned after the lease went", kind)
		}
		if err := r.Pin(th).Lease(ctx, "other", 60e9); err != nil {
			t.Fatalf("%s: lease after the release and read: %v", kind, err)
		}
		fresh := r.Pin("link:lease-read-new-" + kind)
		if got, err := fresh.LeaseRead(ctx, "turn", 60e9, 1); err != nil || len(got) != 0 {
			t.Fatalf("%s: lease and read of a conversation not begun: %d events, %v", kind, len(got), err)
		}
		if got, err := fresh.ReleaseRead(ctx, "turn", 1); err != nil || len(got) != 0 {
			t.Fatalf("%s: release and read of a conversation not begun: %d events, %v", kind, len(got), err)
		}
	}
}
