package gcs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/lnk-dev/link/store"
)

// ev is a small event seq, its text tag.
func ev(seq int64, tag string) store.Event {
	return store.Event{
		Seq:  seq,
		Time: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).Add(time.Duration(seq) * time.Second),
		Kind: store.KindMessage,
		Text: fmt.Sprintf("%s #%d", tag, seq),
	}
}

// appendN appends events 1 to n tagged tag.
func appendN(t testing.TB, d *Driver, thread string, n int, tag string) []store.Event {
	t.Helper()
	es := make([]store.Event, n)
	for i := range es {
		es[i] = ev(int64(i+1), tag)
		if err := d.Append(context.Background(), thread, es[i]); err != nil {
			t.Fatalf("append %s#%d: %v", thread, i+1, err)
		}
	}
	return es
}

// sameEvents fails t unless got are want.
func sameEvents(t testing.TB, what string, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Text != want[i].Text || !got[i].Time.Equal(want[i].Time) {
			t.Fatalf("%s: event %d is #%d %q, want #%d %q", what, i, got[i].Seq, got[i].Text, want[i].Seq, want[i].Text)
		}
	}
}

// The object of an event is named by its prefix, its thread's folder and
// its zero-padded number, and holds exactly the event's line.
func TestObjectNames(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, nil)
	// The second prefix is the first with slashes about it: the same
	// names, so its append is the first's sent again, which succeeds.
	for _, prefix := range []string{"agents/main/chats", "/agents/main/chats/", ""} {
		d := Open(c, testBucket, prefix)
		thread := "telegram:42"
		if prefix == "" {
			thread = "link:bare"
		}
		e := ev(1, "named")
		if err := d.Append(context.Background(), thread, e); err != nil {
			t.Fatal(err)
		}
		want := "agents/main/chats/telegram-42/events/00000000000000000001.json"
		if prefix == "" {
			want = "link-bare/events/00000000000000000001.json"
		}
		line, err := store.MarshalLine(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := getObject(t, c, want); string(got) != string(line) {
			t.Fatalf("prefix %q: object %s holds %q, want %q", prefix, want, got, line)
		}
	}
	var names []string
	it := c.Bucket(testBucket).Objects(context.Background(), nil)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name)
	}
	want := []string{"agents/main/chats/telegram-42/events/00000000000000000001.json", "link-bare/events/00000000000000000001.json"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("objects %q, want %q", names, want)
	}
}

// Sixteen Drivers, each with a client of its own, race to write the same
// number with different bytes: exactly one wins, the rest are refused with
// ErrSeqTaken, and the winner's event is what is read.
func TestRaceOneWinner(t *testing.T) {
	srv := newFake(t)
	const writers = 16
	drivers := make([]*Driver, writers)
	for i := range drivers {
		drivers[i] = openDriver(t, srv)
	}
	var want []store.Event
	for seq := int64(1); seq <= 2; seq++ {
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, writers)
		)
		for w := range writers {
			wg.Go(func() {
				<-start
				errs[w] = drivers[w].Append(context.Background(), "default", ev(seq, fmt.Sprintf("writer %d", w)))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("#%d: writers %d and %d both appended", seq, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, store.ErrSeqTaken):
				t.Fatalf("#%d: writer %d: %v, want ErrSeqTaken", seq, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("#%d: no writer appended", seq)
		}
		want = append(want, ev(seq, fmt.Sprintf("writer %d", winner)))
		got, err := openDriver(t, srv).Read(context.Background(), "default", 1)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, fmt.Sprintf("after the race for #%d", seq), got, want)
	}
}

// A write whose answer is lost after its body went is sent again by the
// client; the retry is refused (the name is taken, by itself), finds its
// own bytes there, and the append succeeds.
func TestLostAnswerRetryFindsItsOwn(t *testing.T) {
	srv := newFake(t)
	name := eventName(testPrefix+"/default/", 2)
	f := &faults{match: uploadOf(name), fault: lostAnswer}
	d := Open(newClient(t, srv, f), testBucket, testPrefix)
	want := appendN(t, d, "default", 1, "mine")
	second := ev(2, "mine")
	if err := d.Append(context.Background(), "default", second); err != nil {
		t.Fatalf("append whose answer was lost: %v", err)
	}
	if n := f.count(); n != 2 {
		t.Fatalf("the upload of #2 was sent %d times, want 2 (the lost one, then the retry)", n)
	}
	got, err := openDriver(t, srv).Read(context.Background(), "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "after the lost answer", got, append(want, second))
	// The same event appended again, by a caller that never heard back,
	// finds its bytes too.
	if err := d.Append(context.Background(), "default", second); err != nil {
		t.Fatalf("the same event appended again: %v", err)
	}
	// Another event at that number is refused.
	if err := d.Append(context.Background(), "default", ev(2, "other")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("another event at #2: %v, want ErrSeqTaken", err)
	}
}

// A write broken off with an error the client doesn't retry reaches the
// caller as an error; the caller's own retry finds its bytes and succeeds.
func TestBrokenAnswerCallerRetry(t *testing.T) {
	srv := newFake(t)
	name := eventName(testPrefix+"/default/", 1)
	f := &faults{match: uploadOf(name), fault: brokenAnswer}
	d := Open(newClient(t, srv, f), testBucket, testPrefix)
	first := ev(1, "mine")
	if err := d.Append(context.Background(), "default", first); err == nil || errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append broken off: %v, want the transport's error", err)
	}
	if err := d.Append(context.Background(), "default", first); err != nil {
		t.Fatalf("the caller's retry: %v", err)
	}
	got, err := d.Read(context.Background(), "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "after the caller's retry", got, []store.Event{first})
}

// A write lost before it reached the store, while another writer took
// the number, is sent again and refused: the bytes there are another's,
// so it is ErrSeqTaken, not success.
func TestLostRequestOtherWriterWins(t *testing.T) {
	srv := newFake(t)
	other := openDriver(t, srv)
	name := eventName(testPrefix+"/default/", 1)
	var otherErr error
	f := &faults{match: uploadOf(name), fault: lostRequest, before: func() {
		otherErr = other.Append(context.Background(), "default", ev(1, "theirs"))
	}}
	d := Open(newClient(t, srv, f), testBucket, testPrefix)
	err := d.Append(context.Background(), "default", ev(1, "mine"))
	if otherErr != nil {
		t.Fatalf("the other writer: %v", otherErr)
	}
	if !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append after the other took #1: %v, want ErrSeqTaken", err)
	}
	if n := f.count(); n != 2 {
		t.Fatalf("the upload of #1 was sent %d times, want 2", n)
	}
	got, err := d.Read(context.Background(), "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "after the other won", got, []store.Event{ev(1, "theirs")})
}

// A number after a gap is refused even by a Driver that has never seen
// the conversation, and nothing is written for it.
func TestGapRefusedByAFreshDriver(t *testing.T) {
	srv := newFake(t)
	appendN(t, openDriver(t, srv), "default", 3, "a")
	d := openDriver(t, srv)
	if err := d.Append(context.Background(), "default", ev(5, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #5 after 3: %v, want ErrSeqTaken", err)
	}
	_, err := newClient(t, srv, nil).Bucket(testBucket).Object(eventName(testPrefix+"/default/", 5)).Attrs(context.Background())
	if !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("object of #5: %v, want none", err)
	}
	if err := d.Append(context.Background(), "default", ev(4, "a")); err != nil {
		t.Fatalf("append #4: %v", err)
	}
}

// Every call takes ctx: one already cancelled is not carried out.
func TestCancelled(t *testing.T) {
	srv := newFake(t)
	d := openDriver(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Append(ctx, "default", ev(1, "a")); !errors.Is(err, context.Canceled) {
		t.Fatalf("append: %v, want context.Canceled", err)
	}
	if _, err := d.Read(ctx, "default", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("read: %v, want context.Canceled", err)
	}
	if _, err := d.Latest(ctx, "default", 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("latest: %v, want context.Canceled", err)
	}
	if _, err := d.Lease(ctx, "default", "h1", time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("lease: %v, want context.Canceled", err)
	}
	if err := d.Release(ctx, "default", "h1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("release: %v, want context.Canceled", err)
	}
	got, err := d.Read(context.Background(), "default", 1)
	if err != nil || len(got) != 0 {
		t.Fatalf("after cancelled calls: %d events, %v", len(got), err)
	}
}
