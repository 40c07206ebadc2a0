package gcs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lnk-dev/link/store"
)

// list is a tools list, as a message's Link-Tools gives one.
func list(names ...string) *[]string {
	if names == nil {
		names = []string{}
	}
	return &names
}

// eqTools says whether two tools lists are the same, nil (every tool)
// only equal to nil.
func eqTools(a, b *[]string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(*a, *b)
}

func show(l *[]string) string {
	if l == nil {
		return "every tool"
	}
	return fmt.Sprint(*l)
}

// A conversation's tools, kept in its tools object: none kept is every
// tool, a list narrows them, a later list narrows again and never widens,
// and another Driver (another process, a machine woken with an empty
// disk) reads what was kept.
func TestToolsNarrowed(t *testing.T) {
	ctx := context.Background()
	srv := newFake(t)
	a, b := openDriver(t, srv), openDriver(t, srv)
	const thread = "link:task-1"
	steps := []struct {
		said, want *[]string
	}{
		{nil, nil},
		{list("files__read", "files__write", "web__fetch"), list("files__read", "files__write", "web__fetch")},
		{nil, list("files__read", "files__write", "web__fetch")},
		{list("web__fetch", "files__read", "run__start"), list("files__read", "web__fetch")},
		{list("files__read", "files__write", "web__fetch", "run__start"), list("files__read", "web__fetch")},
		{list(), list()},
		{list("files__read"), list()},
	}
	for i, s := range steps {
		got, err := a.NarrowTools(ctx, thread, s.said)
		if err != nil {
			t.Fatalf("step %d: narrow by %s: %v", i, show(s.said), err)
		}
		if !eqTools(got, s.want) {
			t.Fatalf("step %d: narrowed by %s to %s, want %s", i, show(s.said), show(got), show(s.want))
		}
		read, err := b.ReadTools(ctx, thread)
		if err != nil {
			t.Fatalf("step %d: the other Driver reads: %v", i, err)
		}
		if !eqTools(read, s.want) {
			t.Fatalf("step %d: the other Driver reads %s, want %s", i, show(read), show(s.want))
		}
	}
	if got := string(getObject(t, newClient(t, srv, nil), testPrefix+"/link-task-1/"+toolsName)); got != "[]\n" {
		t.Fatalf("tools object holds %q, want []", got)
	}
	// Another conversation's tools are its own.
	if got, err := a.ReadTools(ctx, "link:task-2"); err != nil || got != nil {
		t.Fatalf("another conversation's tools: %s, %v; want every tool", show(got), err)
	}
}

// A bad list is refused before anything is written; a tools object that
// doesn't read as a list of names is store.ErrCorrupt, never every tool.
func TestToolsRefused(t *testing.T) {
	ctx := context.Background()
	srv := newFake(t)
	d := openDriver(t, srv)
	if _, err := d.NarrowTools(ctx, "default", list("files__read", "not a name")); err == nil {
		t.Fatal("a list with a bad name was taken")
	}
	if got, err := d.ReadTools(ctx, "default"); err != nil || got != nil {
		t.Fatalf("after the refusal: %s, %v; want nothing kept", show(got), err)
	}
	if _, err := d.NarrowTools(ctx, "../up", list("a")); err == nil {
		t.Fatal("a thread the contract refuses was narrowed")
	}
	c := newClient(t, srv, nil)
	for _, body := range []string{"null\n", `{"tools":[]}`, `["ok", "bad name"]`, "[1]"} {
		putObject(t, c, testPrefix+"/default/"+toolsName, []byte(body))
		if _, err := d.ReadTools(ctx, "default"); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("read of %q: %v, want ErrCorrupt", body, err)
		}
		if _, err := d.NarrowTools(ctx, "default", list("a")); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("narrow over %q: %v, want ErrCorrupt", body, err)
		}
	}
}

// Eight narrowers on two Drivers narrow one conversation at once, the
// first writes racing to create its tools object: it ends with the tools
// in every list, whichever order they landed in.
func TestToolsNarrowRace(t *testing.T) {
	ctx := context.Background()
	srv := newFake(t)
	drivers := []*Driver{openDriver(t, srv), openDriver(t, srv)}
	all := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}
	const narrowers = 8
	var wg sync.WaitGroup
	errs := make([]error, narrowers)
	for i := range narrowers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Narrower i's list is every tool but ti.
			said := slices.Delete(slices.Clone(all), i, i+1)
			_, errs[i] = drivers[i%2].NarrowTools(ctx, "default", &said)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("narrower %d: %v", i, err)
		}
	}
	got, err := drivers[0].ReadTools(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if want := list("t8", "t9"); !eqTools(got, want) {
		t.Fatalf("after the race: %s, want %s", show(got), show(want))
	}
}

// A narrowing whose answer was lost lands once: the client sends it
// again, is refused (the generation moved, by its own write), reads what
// is there and finds it narrowed.
func TestToolsLostAnswer(t *testing.T) {
	ctx := context.Background()
	srv := newFake(t)
	name := testPrefix + "/default/" + toolsName
	f := &faults{match: uploadOf(name), fault: lostAnswer}
	d := Open(newClient(t, srv, f), testBucket, testPrefix)
	if _, err := d.NarrowTools(ctx, "default", list("a", "b")); err != nil {
		t.Fatalf("first narrowing: %v", err)
	}
	f.mu.Lock()
	f.done = false
	f.mu.Unlock()
	got, err := d.NarrowTools(ctx, "default", list("b", "c"))
	if err != nil {
		t.Fatalf("narrowing whose answer was lost: %v", err)
	}
	if !eqTools(got, list("b")) {
		t.Fatalf("narrowed to %s, want [b]", show(got))
	}
	if n := f.count(); n < 3 {
		t.Fatalf("%d uploads seen, want the lost one sent again", n)
	}
	if got, err := openDriver(t, srv).ReadTools(ctx, "default"); err != nil || !eqTools(got, list("b")) {
		t.Fatalf("read after: %s, %v", show(got), err)
	}
}
