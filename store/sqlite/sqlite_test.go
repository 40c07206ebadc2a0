package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)

// open opens a driver on chats, closed when t ends.
func open(t *testing.T, chats string) *Driver {
	t.Helper()
	d, err := Open(chats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

func event(seq int64, text string) store.Event {
	return store.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second), Kind: store.KindMessage, Text: text}
}

func appendN(t *testing.T, d *Driver, thread string, from, to int64, text string) {
	t.Helper()
	for s := from; s <= to; s++ {
		if err := d.Append(context.Background(), thread, event(s, text)); err != nil {
			t.Fatal(err)
		}
	}
}

func seqs(es []store.Event) []int64 {
	var s []int64
	for _, e := range es {
		s = append(s, e.Seq)
	}
	return s
}

func span(from, to int64) []int64 {
	var s []int64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func TestFileAndBytes(t *testing.T) {
	chats := filepath.Join(t.TempDir(), "agents", "main", "chats")
	d := open(t, chats)
	if got, want := d.Path(), filepath.Join(chats, "events.sqlite"); got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
	if _, err := os.Stat(d.Path()); err != nil {
		t.Fatal(err)
	}
	e := event(1, "hello \"there\"\n🙂")
	if err := d.Append(context.Background(), "telegram:42", e); err != nil {
		t.Fatal(err)
	}
	var body []byte
	if err := d.r.QueryRow(`SELECT body FROM events WHERE thread = 'telegram:42' AND seq = 1`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	want, err := store.MarshalLine(e)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Fatalf("body %q, want the event's line %q", body, want)
	}
	var mode string
	if err := d.r.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q (%v), want wal", mode, err)
	}
}

func TestSeqTaken(t *testing.T) {
	d := open(t, t.TempDir())
	ctx := context.Background()
	for _, s := range []int64{0, -1, 2} {
		if err := d.Append(ctx, "default", event(s, "x")); !errors.Is(err, store.ErrSeqTaken) {
			t.Fatalf("append #%d to an empty thread: %v, want ErrSeqTaken", s, err)
		}
	}
	appendN(t, d, "default", 1, 3, "first")
	for _, s := range []int64{1, 3, 5} {
		err := d.Append(ctx, "default", event(s, "second"))
		if !errors.Is(err, store.ErrSeqTaken) {
			t.Fatalf("append #%d after 3: %v, want ErrSeqTaken", s, err)
		}
		if !strings.Contains(err.Error(), "default#") || !strings.Contains(err.Error(), "the next is 4") {
			t.Fatalf("error %q names neither the event nor the next number", err)
		}
	}
	// Another thread's numbers are its own.
	appendN(t, d, "telegram:42", 1, 2, "other")
	es, err := d.Read(ctx, "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs(es), span(1, 3)) {
		t.Fatalf("read %v, want 1..3", seqs(es))
	}
	for _, e := range es {
		if e.Text != "first" {
			t.Fatalf("event %d is %q: a refused append wrote", e.Seq, e.Text)
		}
	}
}

func TestReadFromAndLatest(t *testing.T) {
	d := open(t, t.TempDir())
	ctx := context.Background()
	appendN(t, d, "slack:C0123ABC.1700000000.000100", 1, 50, "a")
	appendN(t, d, "default", 1, 5, "b")
	thread := "slack:C0123ABC.1700000000.000100"
	cases := []struct {
		from int64
		want []int64
	}{{-3, span(1, 50)}, {1, span(1, 50)}, {49, span(49, 50)}, {50, span(50, 50)}, {51, nil}}
	for _, c := range cases {
		es, err := d.Read(ctx, thread, c.from)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seqs(es), c.want) {
			t.Fatalf("read from %d: %v, want %v", c.from, seqs(es), c.want)
		}
	}
	latest := []struct {
		n    int
		want []int64
	}{{32, span(19, 50)}, {1, span(50, 50)}, {50, span(1, 50)}, {100, span(1, 50)}, {0, nil}, {-1, nil}}
	for _, c := range latest {
		es, err := store.Latest(ctx, d, thread, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seqs(es), c.want) {
			t.Fatalf("latest %d: %v, want %v", c.n, seqs(es), c.want)
		}
	}
	if es, err := d.Latest(ctx, "link:none", 32); err != nil || len(es) != 0 {
		t.Fatalf("latest of a thread without events: %v, %v", seqs(es), err)
	}
	if next, err := store.Next(ctx, d, "default"); err != nil || next != 6 {
		t.Fatalf("next %d, %v, want 6", next, err)
	}
}

func TestThreadRefused(t *testing.T) {
	d := open(t, t.TempDir())
	ctx := context.Background()
	var rule *contract.RuleError
	for _, thread := range []string{"", "nope", "telegram:abc", "../x", "link:A"} {
		errs := map[string]error{
			"append": d.Append(ctx, thread, event(1, "x")),
		}
		_, errs["read"] = d.Read(ctx, thread, 1)
		_, errs["latest"] = d.Latest(ctx, thread, 1)
		_, errs["lease"] = d.Lease(ctx, thread, "h", time.Minute)
		errs["release"] = d.Release(ctx, thread, "h")
		for op, err := range errs {
			if !errors.As(err, &rule) || rule.Field != "thread" {
				t.Fatalf("%s %q: %v, want the thread refused", op, thread, err)
			}
		}
	}
	var n int
	if err := d.r.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d events written (%v), want none", n, err)
	}
}

func TestLeaseClock(t *testing.T) {
	d := open(t, t.TempDir())
	ctx := context.Background()
	now := t0
	d.Now = func() time.Time { return now }
	const thread = "telegram:-1001234.7"

	l, err := d.Lease(ctx, thread, "a", time.Minute)
	if err != nil || l.Holder != "a" || !l.Expires.Equal(t0.Add(time.Minute)) {
		t.Fatalf("lease: %+v, %v", l, err)
	}
	now = now.Add(59 * time.Second)
	cur, err := d.Lease(ctx, thread, "b", time.Minute)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease for b: %v, want ErrLeaseHeld", err)
	}
	if cur.Holder != "a" || !cur.Expires.Equal(t0.Add(time.Minute)) {
		t.Fatalf("held lease reads %+v, want a's", cur)
	}
	// Its holder renews it from now.
	if l, err = d.Lease(ctx, thread, "a", time.Minute); err != nil || !l.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("renew: %+v, %v", l, err)
	}
	// At its time, it's anyone's.
	now = l.Expires
	if l, err = d.Lease(ctx, thread, "b", time.Second); err != nil || l.Holder != "b" {
		t.Fatalf("take over an expired lease: %+v, %v", l, err)
	}
	// Released by one that doesn't hold it, it stays.
	if err := d.Release(ctx, thread, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lease(ctx, thread, "a", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease after another's release: %v, want ErrLeaseHeld", err)
	}
	if err := d.Release(ctx, thread, "b"); err != nil {
		t.Fatal(err)
	}
	if l, err = d.Lease(ctx, thread, "a", time.Minute); err != nil || l.Holder != "a" {
		t.Fatalf("lease after release: %+v, %v", l, err)
	}
	for _, bad := range []struct {
		holder string
		ttl    time.Duration
	}{{"", time.Minute}, {"c", 0}, {"c", -time.Second}} {
		if _, err := d.Lease(ctx, "default", bad.holder, bad.ttl); err == nil || errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("lease for %q for %v: %v, want it refused", bad.holder, bad.ttl, err)
		}
	}
}

func TestCorrupt(t *testing.T) {
	d := open(t, t.TempDir())
	ctx := context.Background()
	appendN(t, d, "discord:99", 1, 3, "ok")
	bodies := map[string][]byte{
		"not json":     []byte("{\"seq\":2,\"kind\":"),
		"two values":   []byte(`{"seq":2,"kind":"message"} {}`),
		"another's":    []byte(`{"seq":7,"kind":"message"}` + "\n"),
		"no kind":      []byte(`{"seq":2}`),
		"empty":        {},
		"not an event": []byte(`[1,2]`),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			if _, err := d.w.Exec(`UPDATE events SET body = ? WHERE thread = 'discord:99' AND seq = 2`, body); err != nil {
				t.Fatal(err)
			}
			_, rerr := d.Read(ctx, "discord:99", 1)
			_, lerr := d.Latest(ctx, "discord:99", 2)
			for _, err := range []error{rerr, lerr} {
				if !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("read of a corrupt body: %v, want ErrCorrupt", err)
				}
				for _, s := range []string{d.Path(), "discord:99#2"} {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("error %q doesn't name %s", err, s)
					}
				}
			}
			// What's before it still reads, and appending goes on.
			if es, err := d.Read(ctx, "discord:99", 3); err != nil || !reflect.DeepEqual(seqs(es), []int64{3}) {
				t.Fatalf("read past the corrupt body: %v, %v", seqs(es), err)
			}
		})
	}
}

func TestReopen(t *testing.T) {
	chats := t.TempDir()
	d, err := Open(chats)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, d, "signal:4915112345678", 1, 10, "kept")
	if _, err := d.Lease(context.Background(), "default", "old", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = open(t, chats)
	es, err := d.Read(context.Background(), "signal:4915112345678", 1)
	if err != nil || !reflect.DeepEqual(seqs(es), span(1, 10)) {
		t.Fatalf("read after reopen: %v, %v", seqs(es), err)
	}
	if es[9].Text != "kept" || !es[9].Time.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("event 10 reads %+v", es[9])
	}
	if _, err := d.Lease(context.Background(), "default", "new", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease after reopen: %v, want ErrLeaseHeld", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	chats := t.TempDir()
	d, err := Open(chats)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if d, err := Open(chats); err == nil || !strings.Contains(err.Error(), "schema version") {
		if d != nil {
			d.Close()
		}
		t.Fatalf("open of a newer file: %v, want it refused", err)
	}
}

func TestOddFolderName(t *testing.T) {
	chats := filepath.Join(t.TempDir(), "what? #1 100%")
	d := open(t, chats)
	appendN(t, d, "default", 1, 2, "x")
	if _, err := os.Stat(filepath.Join(chats, File)); err != nil {
		t.Fatalf("the file isn't where its folder says: %v", err)
	}
	if es, err := d.Read(context.Background(), "default", 1); err != nil || len(es) != 2 {
		t.Fatalf("read: %v, %v", seqs(es), err)
	}
}

// A write waiting on another's lock gives up when its context does,
// rather than waiting out the busy timeout.
func TestWaitEndsWithContext(t *testing.T) {
	chats := t.TempDir()
	a, b := open(t, chats), open(t, chats)
	tx, err := b.w.Begin() // BEGIN IMMEDIATE: b holds the file's write lock
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = a.Append(ctx, "default", event(1, "x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append while another holds the lock: %v, want it to give up with its context", err)
	}
	if took := time.Since(start); took > BusyTimeout/2 {
		t.Fatalf("append gave up after %v, not with its context", took)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	appendN(t, a, "default", 1, 1, "x")
}
