package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// readLog is the log driver, noting the number each read of a thread
// begins at.
type readLog struct {
	*log.Driver
	mu    sync.Mutex
	froms map[string][]int64
	got   int // events the reads returned
}

func (d *readLog) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	d.mu.Lock()
	d.froms[thread] = append(d.froms[thread], from)
	d.mu.Unlock()
	return d.count(d.Driver.Read(ctx, thread, from))
}

// LeaseRead and ReleaseRead note their reads as Read does.
func (d *readLog) LeaseRead(ctx context.Context, thread, holder string, ttl time.Duration, from int64) (store.Lease, []store.Event, error) {
	d.mu.Lock()
	d.froms[thread] = append(d.froms[thread], from)
	d.mu.Unlock()
	l, es, err := d.Driver.LeaseRead(ctx, thread, holder, ttl, from)
	es, err = d.count(es, err)
	return l, es, err
}

func (d *readLog) ReleaseRead(ctx context.Context, thread, holder string, from int64) ([]store.Event, error) {
	d.mu.Lock()
	d.froms[thread] = append(d.froms[thread], from)
	d.mu.Unlock()
	return d.count(d.Driver.ReleaseRead(ctx, thread, holder, from))
}

// count notes the events a read returned.
func (d *readLog) count(es []store.Event, err error) ([]store.Event, error) {
	d.mu.Lock()
	d.got += len(es)
	d.mu.Unlock()
	return es, err
}

// Latest notes a read of the latest events, as a read from 0: a turn
// that has nothing kept reads its window so.
func (d *readLog) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	d.mu.Lock()
	d.froms[thread] = append(d.froms[thread], 0)
	d.mu.Unlock()
	return d.count(d.Driver.Latest(ctx, thread, n))
}

// reads are the numbers the reads of thread began at since the last ask.
func (d *readLog) reads(thread string) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.froms[thread]
	d.froms[thread] = nil
	return out
}

// readRig is a rig whose log conversations are read through a readLog.
func readRig(t *testing.T, keep int) (*rig, *readLog) {
	d := &readLog{froms: map[string][]int64{}}
	r := newRig(t, func(c *harness.Config) {
		c.KeepEvents = keep
		c.Drivers = func(p store.Paths) (map[string]store.Conversations, error) {
			d.Driver = log.Open(p.Chats()) // once: the harness opens an agent's store once
			return map[string]store.Conversations{log.Name: d}, nil
		}
	})
	return r, d
}

// sayOK sends text in thread, failing t unless it is answered.
func (r *rig) sayOK(thread, text string) {
	r.T.Helper()
	if _, _, err := r.Say(thread, text, nil); err != nil {
		r.T.Fatal(err)
	}
}

// The events of a conversation are kept between its turns: a turn reads
// only from the last event kept, and the model is asked what it would be
// had the turn read the conversation whole. With none kept, every turn
// reads its window afresh, its latest events first (a read from 0 here).
func TestHistoryReadsWhatCame(t *testing.T) {
	for _, keep := range []int{0, -1} {
		r, d := readRig(t, keep)
		r.Model.Push(model.Response{Text: "a1"}, model.Response{Text: "a2"}, model.Response{Text: "a3"})
		for i, text := range []string{"one", "two", "three"} {
			d.mu.Lock()
			got0 := d.got
			d.mu.Unlock()
			r.sayOK("telegram:3", text)
			whole := false
			for _, from := range d.reads("telegram:3") {
				whole = whole || from <= 1
			}
			// The first turn has nothing kept; each later one reads from
			// the last event the turn before kept, its own answer, and so
			// reads back nothing it wrote: that answer alone (proving the
			// conversation is the one kept), nothing after it.
			if want := keep < 0 || i < 1; whole != want {
				t.Fatalf("keep %d, turn %d: read whole %v, want %v", keep, i+1, whole, want)
			}
			d.mu.Lock()
			got := d.got - got0
			d.mu.Unlock()
			if keep >= 0 && i > 0 && got != 1 {
				t.Fatalf("keep %d, turn %d: its reads gave %d events, want 1 (the answer kept)", keep, i+1, got)
			}
		}
		reqs := r.Requests("telegram:3")
		if len(reqs) != 3 {
			t.Fatalf("%d calls of the model", len(reqs))
		}
		said := scripted.RequestText(reqs[2])
		for _, w := range []string{"one", "a1", "two", "a2", "three"} {
			if !strings.Contains(said, w) {
				t.Fatalf("keep %d: the third turn's model wasn't given %q:\n%s", keep, w, said)
			}
		}
		if keep >= 0 && r.Harness.HistoryLen() != 1 {
			t.Fatalf("%d conversations kept, want 1", r.Harness.HistoryLen())
		}
	}
}

// A conversation made again under the events kept (its folder removed,
// other events written) is read afresh: its kept last event reads
// otherwise. Events another process wrote after those kept are read.
func TestHistoryMadeAgain(t *testing.T) {
	r, d := readRig(t, 0)
	r.Model.Push(model.Response{Text: "a1"}, model.Response{Text: "a2"}, model.Response{Text: "a3"}, model.Response{Text: "a4"})
	r.sayOK("telegram:4", "one")
	r.sayOK("telegram:4", "two") // keeps one and a1
	// Another process's turn.
	p, _ := store.For(r.Home, testAgent)
	other := log.Open(p.Chats())
	ctx := context.Background()
	now := time.Now().UTC()
	for i, e := range []store.Event{
		{Kind: store.KindMessage, Text: "from elsewhere"},
		{Kind: store.KindAnswer, Text: "answered elsewhere"},
	} {
		e.Seq, e.Time = int64(5+i), now
		if err := other.Append(ctx, "telegram:4", e); err != nil {
			t.Fatal(err)
		}
	}
	d.reads("telegram:4")
	r.sayOK("telegram:4", "three")
	for _, from := range d.reads("telegram:4") {
		if from <= 1 {
			t.Fatal("read afresh after another process's turn")
		}
	}
	if said := scripted.RequestText(r.Requests("telegram:4")[2]); !strings.Contains(said, "from elsewhere") || !strings.Contains(said, "answered elsewhere") || !strings.Contains(said, "a2") {
		t.Fatalf("the third turn's model wasn't given another process's turn:\n%s", said)
	}
	// Made again: longer than what was kept, every event other.
	dir, err := p.Conversation("telegram:4")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		e := store.Event{Seq: int64(i + 1), Time: now, Kind: store.KindMessage, Text: "remade"}
		if i%2 == 1 {
			e.Kind = store.KindAnswer
		}
		if err := other.Append(ctx, "telegram:4", e); err != nil {
			t.Fatal(err)
		}
	}
	d.reads("telegram:4")
	r.sayOK("telegram:4", "four")
	whole := false
	for _, from := range d.reads("telegram:4") {
		whole = whole || from <= 1
	}
	said := scripted.RequestText(r.Requests("telegram:4")[3])
	if !whole || strings.Contains(said, "\none\n") || strings.Contains(said, "\na1\n") || strings.Count(said, "remade") != 12 {
		t.Fatalf("a conversation made again: read whole %v; the model was given:\n%s", whole, said)
	}
	if _, err := os.Stat(filepath.Join(dir, log.EventsFile)); err != nil {
		t.Fatal(err)
	}
}

// A conversation's first turn finds it without events, and its first
// round doesn't read back the message it just wrote: a large prompt is
// never read back from the store in its own turn.
func TestFirstTurnReadsNothingBack(t *testing.T) {
	r, d := readRig(t, 0)
	r.Model.Push(model.Response{Text: "a1"})
	r.sayOK("telegram:5", "one")
	d.mu.Lock()
	got := d.got
	d.mu.Unlock()
	if got != 0 {
		t.Fatalf("the first turn read %d events back (reads from %v), want none", got, d.reads("telegram:5"))
	}
	if said := scripted.RequestText(r.Requests("telegram:5")[0]); !strings.Contains(said, "one") {
		t.Fatalf("the model wasn't given the message:\n%s", said)
	}
}
