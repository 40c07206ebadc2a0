package convert_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/sqlite"
	"github.com/lnk-dev/link/store/transcript"
)

// world is an agent with conversations of every way, and what each holds.
type world struct {
	p       store.Paths
	events  map[string][]store.Event
	tools   map[string]*[]string
	answers map[string][]string
}

var worldThreads = []string{"telegram:1", "telegram:-1002", "slack:C0123ABC.1700000000.000100", "link:notes", "default"}

func newWorld(t *testing.T) *world {
	ctx := context.Background()
	w := &world{p: fixture.Agent(t), events: map[string][]store.Event{}, tools: map[string]*[]string{}, answers: map[string][]string{}}
	ds := fixture.Drivers(t, w.p)
	kinds := []string{log.Name, compact.Name, sqlite.Name}
	f := &folder.Files{Paths: w.p}
	for i, th := range worldThreads {
		kind := kinds[i%len(kinds)]
		r, err := router.New(w.p, kind, ds)
		if err != nil {
			t.Fatal(err)
		}
		es := fixture.Conversation([]int{2, 9, 3, 2, 1}[i], th) // compact's 40 events fold once
		fixture.AppendAll(t, r, th, es)
		w.events[th] = es
		if i%2 == 0 {
			tools := &[]string{"memory__search", fmt.Sprintf("tool%d", i)}
			if _, err := f.NarrowTools(ctx, th, tools); err != nil {
				t.Fatal(err)
			}
			w.tools[th] = tools
			if _, err := (&delivery.Answers{Paths: f.Paths}).Keep(ctx, th, "kept of "+th, fixture.T0, 4); err != nil {
				t.Fatal(err)
			}
			w.answers[th] = []string{"kept of " + th}
			if err := f.AskEnd(ctx, th, fixture.T0); err != nil {
				t.Fatal(err)
			}
		}
	}
	return w
}

// check fails t unless every conversation reads as it was written, with
// what its folder held, and is kept one of the ways in kinds.
func (w *world) check(t *testing.T, kinds ...string) {
	t.Helper()
	w.checkWith(t, fixture.Openers(t), kinds...)
}

// checkWith is check, reading through the drivers of openers.
func (w *world) checkWith(t *testing.T, openers map[string]driver.Opener, kinds ...string) {
	t.Helper()
	ctx := context.Background()
	ds := map[string]store.Conversations{}
	for name, open := range openers {
		d, err := open(w.p.Chats())
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := d.(store.Closer); ok {
			defer c.Close()
		}
		ds[name] = d
	}
	r, err := router.New(w.p, log.Name, ds)
	if err != nil {
		t.Fatal(err)
	}
	f := &folder.Files{Paths: w.p}
	for _, th := range worldThreads {
		fixture.SameLines(t, th, fixture.ReadAll(t, r, th), w.events[th])
		kind, err := r.Kind(th)
		if err != nil || !contains(kinds, kind) {
			t.Fatalf("%s is kept %q (%v), want one of %v", th, kind, err, kinds)
		}
		tools, err := f.ReadTools(ctx, th)
		if err != nil || !reflect.DeepEqual(tools, w.tools[th]) {
			t.Fatalf("%s's tools: %v, %v; want %v", th, tools, err, w.tools[th])
		}
		_, asked, _ := f.EndAsked(ctx, th)
		if asked != (w.tools[th] != nil) {
			t.Fatalf("%s: end asked %v", th, asked)
		}
		dir, _ := w.p.Conversation(th)
		_, err = os.Stat(filepath.Join(dir, transcript.File))
		if kind == compact.Name && err == nil {
			t.Fatalf("%s: a copy beside a compact conversation", th)
		}
		// The lease is free: no convert holds it.
		if _, err := r.Lease(ctx, th, "turn", time.Minute); err != nil {
			t.Fatalf("%s: lease after convert: %v", th, err)
		}
		r.Release(ctx, th, "turn")
	}
	all, err := (&delivery.Answers{Paths: f.Paths}).Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, k := range all {
		got[k.Thread] = append(got[k.Thread], k.Text)
	}
	if !reflect.DeepEqual(got, w.answers) {
		t.Fatalf("answers: %v, want %v", got, w.answers)
	}
}

// leftovers lists a convert's folders left in the conversations folder.
func (w *world) leftovers(t *testing.T) []string {
	entries, err := os.ReadDir(w.p.Chats())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestConvertRoundTrip(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.check(t, log.Name, compact.Name, sqlite.Name)
	for _, to := range []string{log.Name, compact.Name, sqlite.Name, log.Name} {
		var seen [][2]int
		res, err := convert.Agent(ctx, w.p, to, fixture.Openers(t), func(done, total int) { seen = append(seen, [2]int{done, total}) })
		if err != nil {
			t.Fatalf("convert to %s: %v", to, err)
		}
		w.check(t, to)
		if left := w.leftovers(t); len(left) != 0 {
			t.Fatalf("convert to %s left %v", to, left)
		}
		if len(seen) != len(res.Converted)+1 || seen[len(seen)-1] != [2]int{len(res.Converted), len(res.Converted)} {
			t.Fatalf("progress %v for %d converted", seen, len(res.Converted))
		}
		// A second convert to the same way has nothing to do.
		again, err := convert.Agent(ctx, w.p, to, fixture.Openers(t), nil)
		if err != nil || len(again.Converted) != 0 {
			t.Fatalf("convert to %s again: %v, %v", to, again.Converted, err)
		}
	}
}

// From a driver that keeps rows outside the folder, the old way's rows
// are forgotten, or said not to be by a driver that can't.
func TestConvertForgetsOldRows(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, sqlite.Name)
	es := fixture.Conversation(3, "a")
	fixture.AppendAll(t, r, "telegram:1", es)
	res, err := convert.Agent(ctx, p, log.Name, fixture.Openers(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(p.Chats())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := fixture.ReadAll(t, db, "telegram:1")
	if _, ok := any(db).(store.Forgetter); ok {
		if len(rows) != 0 || len(res.Unforgotten) != 0 {
			t.Fatalf("sqlite keeps %d rows after convert (unforgotten %v)", len(rows), res.Unforgotten)
		}
	} else if !reflect.DeepEqual(res.Unforgotten, []string{"telegram:1"}) {
		t.Fatalf("unforgotten: %v, want the thread whose rows sqlite keeps", res.Unforgotten)
	}
	fixture.SameLines(t, "as a log", fixture.ReadAll(t, r, "telegram:1"), es)
}

func TestConvertRefusedWhileLeased(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := fixture.Router(t, w.p, log.Name)
	if _, err := r.Lease(ctx, "link:notes", "turn", time.Minute); err != nil {
		t.Fatal(err)
	}
	_, err := convert.Agent(ctx, w.p, compact.Name, fixture.Openers(t), nil)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("convert while a turn runs: %v, want ErrLeaseHeld", err)
	}
	// Nothing changed, and every lease the convert took is let go.
	for i, th := range worldThreads {
		kind, _ := r.Kind(th)
		if want := []string{log.Name, compact.Name, sqlite.Name}[i%3]; kind != want {
			t.Fatalf("%s is %s after a refused convert, want %s", th, kind, want)
		}
	}
	if err := r.Release(ctx, "link:notes", "turn"); err != nil {
		t.Fatal(err)
	}
	w.check(t, log.Name, compact.Name, sqlite.Name)
	if _, err := convert.Agent(ctx, w.p, compact.Name, fixture.Openers(t), nil); err != nil {
		t.Fatalf("convert once the turn ended: %v", err)
	}
	w.check(t, compact.Name)
}

func TestConvertRefusesUnknownWay(t *testing.T) {
	w := newWorld(t)
	for _, to := range []string{"gcs", "", "Log"} {
		if _, err := convert.Agent(context.Background(), w.p, to, fixture.Openers(t), nil); err == nil {
			t.Errorf("convert to %q: no error", to)
		}
	}
	w.check(t, log.Name, compact.Name, sqlite.Name)
}

var errStopped = errors.New("stopped here")

// A convert stopped before any step, of any conversation, leaves every
// conversation whole: where it is, or put there by the next convert.
func TestConvertInterrupted(t *testing.T) {
	ctx := context.Background()
	steps := []string{convert.StepStage, convert.StepAside, convert.StepIn, convert.StepForget, convert.StepClean}
	for _, to := range []string{sqlite.Name, log.Name, compact.Name} {
		for _, step := range steps {
			t.Run(to+"/"+step, func(t *testing.T) {
				w := newWorld(t)
				// Stop at a step of a conversation converted: to a log, the
				// one sqlite keeps, whose rows make the most states.
				stopAt := map[string]string{sqlite.Name: "telegram:1", compact.Name: "telegram:1", log.Name: "slack:C0123ABC.1700000000.000100"}[to]
				c := &convert.Job{Paths: w.p, To: to, Drivers: fixture.Openers(t), Step: func(th, s string) error {
					if th == stopAt && s == step {
						return errStopped
					}
					return nil
				}}
				if _, err := c.Run(ctx); !errors.Is(err, errStopped) {
					t.Fatalf("convert: %v, want it stopped", err)
				}
				if _, err := convert.Resolve(ctx, w.p, fixture.Openers(t)); err != nil {
					t.Fatalf("resolve: %v", err)
				}
				if left := w.leftovers(t); len(left) != 0 {
					t.Fatalf("resolved, yet left %v", left)
				}
				w.check(t, log.Name, compact.Name, sqlite.Name)
				// The next convert finishes the job.
				if _, err := convert.Agent(ctx, w.p, to, fixture.Openers(t), nil); err != nil {
					t.Fatal(err)
				}
				w.check(t, to)
			})
		}
	}
}

// Stopped after the old way was put aside and before the new was put in,
// the next convert puts it in without resolving by hand.
func TestConvertFinishesTheLast(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	c := &convert.Job{Paths: w.p, To: log.Name, Drivers: fixture.Openers(t), Step: func(th, s string) error {
		if s == convert.StepIn {
			return errStopped
		}
		return nil
	}}
	if _, err := c.Run(ctx); !errors.Is(err, errStopped) {
		t.Fatalf("convert: %v", err)
	}
	if left := w.leftovers(t); len(left) != 2 {
		t.Fatalf("left %v, want the old aside and the new beside", left)
	}
	if _, err := convert.Agent(ctx, w.p, log.Name, fixture.Openers(t), nil); err != nil {
		t.Fatal(err)
	}
	w.check(t, log.Name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// An event kept with its zone (compact keeps what it's given) converts to
// the log, which keeps UTC: the same instant, compared as such.
func TestConvertZones(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, compact.Name)
	es := fixture.Conversation(1, "a")
	zone := time.FixedZone("CET", 3600)
	for i := range es {
		es[i].Time = es[i].Time.In(zone)
	}
	fixture.AppendAll(t, r, "telegram:1", es)
	if _, err := convert.Agent(ctx, p, log.Name, fixture.Openers(t), nil); err != nil {
		t.Fatal(err)
	}
	got := fixture.ReadAll(t, r, "telegram:1")
	for i := range es {
		es[i].Time = es[i].Time.UTC()
	}
	fixture.SameLines(t, "as a log", got, es)
}
