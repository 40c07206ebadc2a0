package harness_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
)

// TestRequestsAsAfresh: each request a turn sends with the window and its
// messages kept from the turns before is the one made afresh from the
// conversation as the store holds it (harness.BuiltAfresh at its latest
// checkpoint), byte for byte: over a long conversation whose window moves
// on at its summaries, with attachments, its turns taken by two harnesses
// on one store as two processes would, so each finds what it kept stale
// at times and reads the window again.
func TestRequestsAsAfresh(t *testing.T) {
	w := &winModel{}
	const thread = "link:kept"
	var mu sync.Mutex
	checked := 0
	takes := func(m model.Modality) bool { return model.Takes("offline", m, nil) }
	check := func(home string) func(string, string, model.Request) {
		return func(agent, th string, req model.Request) {
			if th != thread || isAsk(req) {
				return
			}
			p, err := store.For(home, agent)
			if err != nil {
				t.Error(err)
				return
			}
			drivers, _ := harnesstest.Drivers(p)
			rt, err := router.New(p, log.Name, drivers)
			if err != nil {
				t.Error(err)
				return
			}
			events, err := rt.Read(t.Context(), th, 1)
			if err != nil {
				t.Error(err)
				return
			}
			cp, _ := window.Latest(events)
			want := harness.BuiltAfresh(events, cp, len(req.Tools) > 0, takes)
			mu.Lock()
			defer mu.Unlock()
			checked++
			if got, want := msgJSON(t, req.Messages), msgJSON(t, want); got != want {
				t.Errorf("request %d at %d events, from %d:\n%s\nwant\n%s", checked, len(events), cp.Start, got, want)
			}
		}
	}
	edit := func(home string) func(*harness.Config) {
		return func(c *harness.Config) {
			c.Provider = func(model.Route) (model.Provider, error) { return w, nil }
			if home != "" {
				c.Home = home
			}
			c.OnCall = check(c.Home)
		}
	}
	a := newRig(t, edit(""))
	b := newRig(t, edit(a.Home)) // another process on a's store
	for _, r := range []*rig{a, b} {
		r.SetSettings(func(s *harness.Settings) { s.Window = small() })
	}
	image := acp.Block{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}
	for i := range 40 {
		r := a
		if i%7 == 3 || i%7 == 4 {
			r = b
		}
		var blocks []acp.Block
		if i%5 == 2 {
			blocks = append(blocks, image)
		}
		if _, _, err := r.Say(thread, fmt.Sprintf("message %d %s", i, strings.Repeat("m", 200)), nil, blocks...); err != nil {
			t.Fatal(err)
		}
		r.waitSummarized(thread)
	}
	summaries := count(a.Events(thread), isKind(store.KindSummary))
	if checked < 40 || summaries < 4 {
		t.Fatalf("%d requests checked, %d summaries: want every turn's over several summaries", checked, summaries)
	}
}
