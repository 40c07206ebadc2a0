package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
)

var t0 = time.Date(2026, 11, 30, 9, 15, 0, 123456789, time.UTC)

// agent is the paths of a new agent's store in a folder of the test's.
func agent(t testing.TB) store.Paths {
	t.Helper()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// handOver is a recover of f's answers, as HandOver makes one.
func handOver(f *Answers, twoPhase bool, pass map[string]bool) ([]Answer, error) {
	return f.HandOver(context.Background(), twoPhase, pass)
}

func TestKeepPendingDone(t *testing.T) {
	ctx := context.Background()
	f := &Answers{Paths: agent(t)}
	id1, err := f.Keep(ctx, "telegram:1", "one", t0, 4)
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := f.Keep(ctx, "slack:D0123", "two", t0.Add(time.Second), 0)
	id3, _ := f.Keep(ctx, "telegram:1", "three", t0.Add(2*time.Second), 9)
	if id1 == id3 || id1 == "" {
		t.Fatalf("ids %q and %q", id1, id3)
	}
	all, err := f.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(all); !reflect.DeepEqual(got, []string{"one", "two", "three"}) {
		t.Fatalf("pending: %v", got)
	}
	if all[0].Thread != "telegram:1" || all[0].Seq != 4 || all[1].Thread != "slack:D0123" {
		t.Fatalf("pending: %+v", all)
	}
	// Unknown ids, of every shape, are passed over.
	if err := f.Done(ctx, []string{id2, "nope", "", "telegram-1~", "../../x~1", "telegram-1~nothere", "telegram-77~x"}); err != nil {
		t.Fatal(err)
	}
	all, _ = f.Pending(ctx)
	if got := texts(all); !reflect.DeepEqual(got, []string{"one", "three"}) {
		t.Fatalf("after done: %v", got)
	}
	// A conversation with none left keeps no file.
	dir, _ := f.Paths.Conversation("slack:D0123")
	if _, err := os.Stat(filepath.Join(dir, folder.Answers)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("answers.json left with none: %v", err)
	}
}

func TestTakeAfter(t *testing.T) {
	ctx := context.Background()
	f := &Answers{Paths: agent(t)}
	th := "link:chat"
	f.Keep(ctx, th, "before", t0, 0)
	f.Keep(ctx, th, "later", t0.Add(2*time.Second), 0)
	f.Keep(ctx, th, "first after", t0.Add(time.Second), 0)
	f.Keep(ctx, "link:other", "another thread's", t0.Add(time.Second), 0)

	k, ok, err := f.TakeAfter(ctx, th, t0.Add(time.Second))
	if err != nil || !ok || k.Text != "first after" {
		t.Fatalf("kept after: %+v %v %v", k, ok, err)
	}
	k, ok, _ = f.TakeAfter(ctx, th, t0.Add(time.Second))
	if !ok || k.Text != "later" {
		t.Fatalf("next kept after: %+v %v", k, ok)
	}
	if k, ok, _ := f.TakeAfter(ctx, th, t0.Add(time.Second)); ok {
		t.Fatalf("one kept before was handed over: %+v", k)
	}
	if _, ok, err := f.TakeAfter(ctx, "link:none", t0); ok || err != nil {
		t.Fatalf("a thread with none: %v %v", ok, err)
	}
	all, _ := f.Pending(ctx)
	if got := texts(all); !reflect.DeepEqual(got, []string{"before", "another thread's"}) {
		t.Fatalf("left: %v", got)
	}
}

func TestRecoverSinglePhase(t *testing.T) {
	ctx := context.Background()
	f := &Answers{Paths: agent(t)}
	f.Keep(ctx, "telegram:1", "one", t0, 0)
	f.Keep(ctx, "telegram:2", "two", t0.Add(time.Second), 0)
	res, err := handOver(f, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"telegram:1", "one"}, {"telegram:2", "two"}}
	if diff := cmp.Diff(want, threadTexts(res)); diff != "" {
		t.Fatalf("recover (-want +got):\n%s", diff)
	}
	// Handed over once: gone from the disk as it was returned, so a new
	// process hands over none.
	res, err = handOver(&Answers{Paths: f.Paths}, false, nil)
	if err != nil || len(res) != 0 {
		t.Fatalf("recover again: %+v, %v; want none once handed", res, err)
	}
}

// threadTexts is each answer's thread and text, in order.
func threadTexts(all []Answer) [][2]string {
	var out [][2]string
	for _, k := range all {
		out = append(out, [2]string{k.Thread, k.Text})
	}
	return out
}

func TestRecoverTwoPhase(t *testing.T) {
	ctx := context.Background()
	f := &Answers{Paths: agent(t)}
	f.Keep(ctx, "telegram:1", "one", t0, 0)
	f.Keep(ctx, "telegram:2", "two", t0.Add(time.Second), 0)
	ask := func() []Answer {
		res, err := handOver(f, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := ask()
	if len(first) != 2 || first[0].ID == "" || first[1].ID == "" || first[0].Text != "one" {
		t.Fatalf("two-phase: %+v", first)
	}
	// Kept until done: handed over again at the next ask.
	if diff := cmp.Diff(first, ask()); diff != "" {
		t.Fatalf("asked again (-first +again):\n%s", diff)
	}
	if err := f.Done(ctx, []string{first[0].ID, "unknown-id", "telegram-9~zz"}); err != nil {
		t.Fatalf("done: %v", err)
	}
	if left := ask(); len(left) != 1 || left[0].ID != first[1].ID {
		t.Fatalf("after done: %+v", left)
	}
	// Done with ids that are none passes them over.
	if err := f.Done(ctx, []string{}); err != nil {
		t.Fatal(err)
	}
	if left := ask(); len(left) != 1 {
		t.Fatalf("after an empty done: %+v", left)
	}
}

// Two processes keeping and letting go at once lose nothing: the folder's
// lock orders them.
func TestKeepConcurrent(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	const n = 20
	errs := make(chan error, 2*n)
	for w := 0; w < 2; w++ {
		f := &Answers{Paths: p} // each its own, as two processes
		go func() {
			for i := 0; i < n; i++ {
				_, err := f.Keep(ctx, "telegram:1", "x", time.Time{}, 0)
				errs <- err
			}
		}()
	}
	for i := 0; i < 2*n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	all, err := (&Answers{Paths: p}).Pending(ctx)
	if err != nil || len(all) != 2*n {
		t.Fatalf("kept %d of %d, %v", len(all), 2*n, err)
	}
}

func texts(all []Answer) []string {
	var out []string
	for _, k := range all {
		out = append(out, k.Text)
	}
	return out
}

// An answer kept for lnk agent chat (KeepForChat) is left by a single-phase
// recover, handed over by a two-phase one until done, and found by
// KeptAfter for the message it answers.
func TestKeepForChat(t *testing.T) {
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	ctx := t.Context()
	sent := time.Now()
	held, err := f.KeepForChat(ctx, "link:notes", "for the chat", time.Time{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Keep(ctx, "link:notes", "caller gone", time.Time{}, 6); err != nil {
		t.Fatal(err)
	}
	res, err := handOver(f, false, nil)
	if err != nil || len(res) != 1 || res[0].Text != "caller gone" {
		t.Fatalf("single phase handed over %+v, %v", res, err)
	}
	res, err = handOver(f, true, nil)
	if err != nil || len(res) != 1 || res[0].ID != held {
		t.Fatalf("two-phase handed over %+v, %v", res, err)
	}
	k, ok, err := f.TakeAfter(ctx, "link:notes", sent)
	if err != nil || !ok {
		t.Fatalf("TakeAfter = %+v, %v, %v", k, ok, err)
	}
	if diff := cmp.Diff(Answer{Thread: "link:notes", Text: "for the chat", Seq: 4, ForChat: true}, k, cmpopts.IgnoreFields(Answer{}, "ID", "At", "EventTime")); diff != "" {
		t.Fatalf("TakeAfter (-want +got):\n%s", diff)
	}
	if all, _ := f.Pending(ctx); len(all) != 0 {
		t.Fatalf("left %+v", all)
	}
	if _, err := f.KeepForChat(ctx, "no thread", "x", time.Time{}, 0); err == nil {
		t.Fatal("kept for a thread the contract refuses")
	}
}
