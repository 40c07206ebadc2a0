package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

func TestNarrowTools(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	th := "telegram:42"
	if got, err := f.ReadTools(ctx, th); got != nil || err != nil {
		t.Fatalf("tools never narrowed: %v, %v; want nil (every tool)", got, err)
	}
	steps := []struct {
		said *[]string
		want *[]string
	}{
		{nil, nil},
		{&[]string{"memory__search", "run__command", "file__read"}, &[]string{"memory__search", "run__command", "file__read"}},
		{nil, &[]string{"memory__search", "run__command", "file__read"}},
		{&[]string{"file__read", "memory__search", "web__fetch"}, &[]string{"memory__search", "file__read"}}, // never wider
		{&[]string{}, &[]string{}},
		{&[]string{"memory__search"}, &[]string{}},
	}
	for i, s := range steps {
		got, err := f.NarrowTools(ctx, th, s.said)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: %v, want %v", i, got, s.want)
		}
		// What's read is what was kept: another process sees the same.
		again, err := (&store.Folders{Paths: f.Paths}).ReadTools(ctx, th)
		if err != nil || !reflect.DeepEqual(again, s.want) {
			t.Fatalf("step %d read again: %v, %v", i, again, err)
		}
	}
	path, _ := f.Paths.ConversationFile(th, store.ToolsFile)
	if err := os.WriteFile(path, []byte(`["../x"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadTools(ctx, th); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("a bad name: %v, want ErrCorrupt", err)
	}
	if _, err := f.ReadTools(ctx, "../x"); err == nil {
		t.Fatal("a bad thread: no error")
	}
}

func TestEnd(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	th := "link:notes"
	if _, asked, err := f.EndAsked(ctx, th); asked || err != nil {
		t.Fatalf("asked before any: %v, %v", asked, err)
	}
	if err := f.ClearEnd(ctx, th); err != nil {
		t.Fatalf("clear none: %v", err)
	}
	at := t0.Add(time.Hour)
	if err := f.AskEnd(ctx, th, at); err != nil {
		t.Fatal(err)
	}
	got, asked, err := f.EndAsked(ctx, th)
	if !asked || err != nil || !got.Equal(at) {
		t.Fatalf("asked: %v at %v, %v", asked, got, err)
	}
	if err := f.ClearEnd(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, asked, _ := f.EndAsked(ctx, th); asked {
		t.Fatal("still asked after clearing")
	}
}

func TestKeepPendingDone(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
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
	if _, err := os.Stat(filepath.Join(dir, store.AnswersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("answers.json left with none: %v", err)
	}
}

func TestKeptAfter(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	th := "link:chat"
	f.Keep(ctx, th, "before", t0, 0)
	f.Keep(ctx, th, "later", t0.Add(2*time.Second), 0)
	f.Keep(ctx, th, "first after", t0.Add(time.Second), 0)
	f.Keep(ctx, "link:other", "another thread's", t0.Add(time.Second), 0)

	k, ok, err := f.KeptAfter(ctx, th, t0.Add(time.Second))
	if err != nil || !ok || k.Text != "first after" {
		t.Fatalf("kept after: %+v %v %v", k, ok, err)
	}
	k, ok, _ = f.KeptAfter(ctx, th, t0.Add(time.Second))
	if !ok || k.Text != "later" {
		t.Fatalf("next kept after: %+v %v", k, ok)
	}
	if k, ok, _ := f.KeptAfter(ctx, th, t0.Add(time.Second)); ok {
		t.Fatalf("one kept before was handed over: %+v", k)
	}
	if _, ok, err := f.KeptAfter(ctx, "link:none", t0); ok || err != nil {
		t.Fatalf("a thread with none: %v %v", ok, err)
	}
	all, _ := f.Pending(ctx)
	if got := texts(all); !reflect.DeepEqual(got, []string{"before", "another thread's"}) {
		t.Fatalf("left: %v", got)
	}
}

func TestRecoverSinglePhase(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	f.Keep(ctx, "telegram:1", "one", t0, 0)
	f.Keep(ctx, "telegram:2", "two", t0.Add(time.Second), 0)
	res, err := f.Recover(ctx, contract.RecoverParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.RecoveredAnswer{{Thread: "telegram:1", Text: "one"}, {Thread: "telegram:2", Text: "two"}}
	if !reflect.DeepEqual(res.Answers, want) {
		t.Fatalf("recover: %+v", res.Answers)
	}
	// Handed over once: gone from the disk as it was returned, so a new
	// process hands over none.
	res, err = (&store.Folders{Paths: f.Paths}).Recover(ctx, contract.RecoverParams{})
	if err != nil || len(res.Answers) != 0 || res.Answers == nil {
		t.Fatalf("recover again: %+v, %v; want [] once handed", res.Answers, err)
	}
}

func TestRecoverTwoPhase(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	f.Keep(ctx, "telegram:1", "one", t0, 0)
	f.Keep(ctx, "telegram:2", "two", t0.Add(time.Second), 0)
	ask := func() []contract.RecoveredAnswer {
		res, err := f.Recover(ctx, contract.RecoverParams{TwoPhase: true})
		if err != nil {
			t.Fatal(err)
		}
		return res.Answers
	}
	first := ask()
	if len(first) != 2 || first[0].ID == "" || first[1].ID == "" || first[0].Text != "one" {
		t.Fatalf("two-phase: %+v", first)
	}
	// Kept until done: handed over again at the next ask.
	if again := ask(); !reflect.DeepEqual(again, first) {
		t.Fatalf("asked again: %+v, want %+v", again, first)
	}
	res, err := f.Recover(ctx, contract.RecoverParams{Done: []string{first[0].ID, "unknown-id", "telegram-9~zz"}})
	if err != nil || res.Answers == nil || len(res.Answers) != 0 {
		t.Fatalf("done: %+v, %v; want []", res.Answers, err)
	}
	if left := ask(); len(left) != 1 || left[0].ID != first[1].ID {
		t.Fatalf("after done: %+v", left)
	}
	// Done with ids that are none passes them over.
	if _, err := f.Recover(ctx, contract.RecoverParams{Done: []string{}}); err != nil {
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
		f := &store.Folders{Paths: p} // each its own, as two processes
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
	all, err := (&store.Folders{Paths: p}).Pending(ctx)
	if err != nil || len(all) != 2*n {
		t.Fatalf("kept %d of %d, %v", len(all), 2*n, err)
	}
}

func texts(all []store.Kept) []string {
	var out []string
	for _, k := range all {
		out = append(out, k.Text)
	}
	return out
}

// A folder whose answers don't read fails the ask, but never loses the
// answers a single phase already took from other folders.
func TestRecoverCorrupt(t *testing.T) {
	ctx := context.Background()
	f := &store.Folders{Paths: agent(t)}
	f.Keep(ctx, "telegram:1", "one", t0, 0)
	f.Keep(ctx, "telegram:2", "two", t0, 0)
	path, _ := f.Paths.ConversationFile("telegram:2", store.AnswersFile)
	if err := os.WriteFile(path, []byte(`[{"id":"x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Recover(ctx, contract.RecoverParams{TwoPhase: true}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("two-phase over a corrupt file: %v, want ErrCorrupt", err)
	}
	res, err := f.Recover(ctx, contract.RecoverParams{})
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "one" {
		t.Fatalf("single phase: %+v, %v; want the one that reads", res.Answers, err)
	}
	if _, err := f.Recover(ctx, contract.RecoverParams{}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("single phase with only the corrupt left: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `[{"id":"x"` {
		t.Fatalf("the corrupt file was changed: %q", b)
	}
}
