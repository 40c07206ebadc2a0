package gcs

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/store"
)

// An object that doesn't read as its event is ErrCorrupt, and the error
// names the object, for Read and Latest alike.
func TestCorruptEvent(t *testing.T) {
	folder := testPrefix + "/default/"
	for _, tc := range []struct {
		name   string
		object string // put over after three events are appended
		body   string
		latest bool // Latest 3 reads it too
	}{
		{"not JSON", eventName(folder, 2), "not an event\n", true},
		{"two lines", eventName(folder, 2), `{"seq":2,"kind":"message"}` + "\n" + `{"seq":2,"kind":"message"}` + "\n", true},
		{"no kind", eventName(folder, 3), `{"seq":3}` + "\n", true},
		{"another number", eventName(folder, 2), `{"seq":7,"kind":"message"}` + "\n", true},
		{"not an event's name", folder + "events/notes.txt", "hello\n", false},
		{"a gap", eventName(folder, 5), `{"seq":5,"kind":"message"}` + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			d := openDriver(t, srv)
			appendN(t, d, "default", 3, "a")
			c := newClient(t, srv, nil)
			putObject(t, c, tc.object, []byte(tc.body))
			_, err := openDriver(t, srv).Read(context.Background(), "default", 1)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("read: %v, want ErrCorrupt", err)
			}
			if url := "gs://" + testBucket + "/" + tc.object; !strings.Contains(err.Error(), url) {
				t.Fatalf("read: %q doesn't name %s", err, url)
			}
			if tc.latest {
				_, err := openDriver(t, srv).Latest(context.Background(), "default", 3)
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.object) {
					t.Fatalf("latest: %v, want ErrCorrupt naming %s", err, tc.object)
				}
			}
		})
	}
}

// A lease object that doesn't read as a lease is ErrCorrupt naming it.
func TestCorruptLease(t *testing.T) {
	srv := newFake(t)
	name := testPrefix + "/default/" + leaseName
	putObject(t, newClient(t, srv, nil), name, []byte("{holder:"))
	d := openDriver(t, srv)
	_, err := d.Lease(context.Background(), "default", "h1", time.Minute)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), name) {
		t.Fatalf("lease: %v, want ErrCorrupt naming %s", err, name)
	}
	if err := d.Release(context.Background(), "default", "h1"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("release: %v, want ErrCorrupt", err)
	}
}

// countingDriver is a Driver on srv whose requests are counted: the
// objects listed and the objects read or asked about.
func countingDriver(t *testing.T, srv *fakestorage.Server) (d *Driver, gets, lists *atomic.Int64) {
	gets, lists = new(atomic.Int64), new(atomic.Int64)
	count := &faults{match: func(r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/o") {
			lists.Add(1)
		} else if r.Method == http.MethodGet {
			gets.Add(1)
		}
		return false
	}}
	return Open(newClient(t, srv, count), testBucket, testPrefix), gets, lists
}

// Latest finds the last number by probing, not by reading every object:
// a Driver that has never seen a conversation of 300 asks about a few
// dozen names and reads only the n it returns; one that has, asks about
// one.
func TestLatestReadsFew(t *testing.T) {
	srv := newFake(t)
	const n = 300
	es := appendN(t, openDriver(t, srv), "default", n, "a")
	d, gets, lists := countingDriver(t, srv)
	for _, tc := range []struct {
		name     string
		maxCalls int64
	}{
		// 1, 3, 7, ... 255 written and 511 not: 9 probes; then 8
		// halvings; then 5 reads.
		{"cold", 9 + 8 + 5},
		// 301 absent; then 5 reads.
		{"warm", 1 + 5},
	} {
		gets.Store(0)
		lists.Store(0)
		got, err := d.Latest(context.Background(), "default", 5)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, tc.name, got, es[n-5:])
		if lists.Load() != 0 || gets.Load() > tc.maxCalls {
			t.Fatalf("%s: %d lists and %d gets, want none and at most %d", tc.name, lists.Load(), gets.Load(), tc.maxCalls)
		}
	}
	// One more appended elsewhere: the warm Driver probes on and finds it.
	es = append(es, ev(n+1, "a"))
	if err := openDriver(t, srv).Append(context.Background(), "default", es[n]); err != nil {
		t.Fatal(err)
	}
	got, err := d.Latest(context.Background(), "default", 2)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "after another's append", got, es[n-1:])
}

// A read from a later number (a turn's read of what came since) lists
// nothing: it probes for the last as Latest does and reads the objects
// after from by name, so its cost doesn't grow with the conversation; it
// sees what another Driver appended meanwhile, and nothing past the last.
func TestReadSinceListsNothing(t *testing.T) {
	srv := newFake(t)
	const n = 300
	es := appendN(t, openDriver(t, srv), "default", n, "a")
	d, gets, lists := countingDriver(t, srv)
	if _, err := d.Latest(context.Background(), "default", 1); err != nil { // up to date
		t.Fatal(err)
	}
	es = append(es, ev(n+1, "a"), ev(n+2, "a"))
	for _, e := range es[n:] {
		if err := openDriver(t, srv).Append(context.Background(), "default", e); err != nil {
			t.Fatal(err)
		}
	}
	gets.Store(0)
	got, err := d.Read(context.Background(), "default", n-1)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "since", got, es[n-2:])
	// 301 and 302 written, 303 and 304 not (a doubling step, then a
	// halving); then 4 reads.
	if lists.Load() != 0 || gets.Load() > 4+4 {
		t.Fatalf("%d lists and %d gets, want none and at most 8", lists.Load(), gets.Load())
	}
	if got, err := d.Read(context.Background(), "default", n+3); err != nil || len(got) != 0 {
		t.Fatalf("past the last: %d events, %v", len(got), err)
	}
}

// Latest finds the last of conversations of every length up to a few
// powers of two past, from a Driver that has never seen them.
func TestLatestCold(t *testing.T) {
	srv := newFake(t)
	w := openDriver(t, srv)
	var es []store.Event
	for k := int64(1); k <= 34; k++ {
		e := ev(k, "a")
		if err := w.Append(context.Background(), "default", e); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
		got, err := openDriver(t, srv).Latest(context.Background(), "default", 3)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, "latest 3", got, es[max(0, len(es)-3):])
	}
}
