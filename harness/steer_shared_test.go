package harness_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

// sawAll is a model that answers, after a short while, with the texts
// of every message it was sent, so an answer says which messages it saw.
type sawAll struct{}

func (sawAll) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	var saw []string
	for _, m := range req.Messages {
		if m.Role != model.RoleUser {
			continue
		}
		for _, p := range m.Parts {
			if p.Kind == model.KindText && strings.HasPrefix(p.Text, "m-") {
				saw = append(saw, p.Text)
			}
		}
	}
	select { // the model's latency, so messages come while it answers
	case <-time.After(15 * time.Millisecond):
	case <-ctx.Done():
		return model.Response{}, ctx.Err()
	}
	text := "saw " + strings.Join(saw, " ")
	if err := onDelta(model.Delta{Text: text}); err != nil {
		return model.Response{}, err
	}
	return model.Response{Text: text, StopReason: model.StopEnd}, nil
}

// sqliteShared gives the drivers of harnesses with homes of their own
// whose conversations are all in one SQLite file, in dir.
func sqliteShared(t *testing.T) func(p store.Paths) (map[string]store.Conversations, error) {
	dir := t.TempDir()
	return func(p store.Paths) (map[string]store.Conversations, error) {
		ds, err := testDrivers(p)
		if err != nil {
			return nil, err
		}
		d, err := sqlite.Open(dir)
		if err != nil {
			return nil, err
		}
		ds["sqlite"] = d
		return ds, nil
	}
}

// sendAsLnk sends text in thread to the endpoint at url as lnk agent chat
// send does: the answers kept for the thread before it are noted, the
// message sent, and, told steered, the first answer kept after them
// waited for (up to wait), taken and let go. It returns the answer's
// text, whether it was steered, and the kept answer's id.
func sendAsLnk(ctx context.Context, url, thread, text string, wait time.Duration) (answer string, steered bool, id string, err error) {
	before, err := keptFor(ctx, url, thread)
	if err != nil {
		return "", false, "", err
	}
	x, err := dialAs(ctx, url, thread)
	if err != nil {
		return "", false, "", err
	}
	var mu sync.Mutex
	var b strings.Builder
	c := acp.NewClient(context.Background(), x, func(method string, params json.RawMessage) {
		var p struct {
			Update acp.Update `json:"update"`
		}
		if method == acp.MethodSessionUpdate && json.Unmarshal(params, &p) == nil && p.Update.SessionUpdate == acp.UpdateMessageChunk && p.Update.Content != nil {
			mu.Lock()
			b.WriteString(p.Update.Content.Text)
			mu.Unlock()
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return "", false, "", err
	}
	if err := c.Resume(ctx, thread); err != nil {
		return "", false, "", err
	}
	res, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	if err != nil {
		return "", false, "", err
	}
	if !res.Steered() {
		mu.Lock()
		defer mu.Unlock()
		return b.String(), false, "", nil
	}
	var kept *contract.RecoveredAnswer
	waited := testwait.Err(wait, "an answer kept for "+thread, func() bool {
		var all []contract.RecoveredAnswer
		if all, err = keptFor(ctx, url, thread); err != nil {
			return true
		}
		for _, k := range all {
			if !slices.ContainsFunc(before, func(o contract.RecoveredAnswer) bool { return o.ID == k.ID }) {
				kept = &k
				return true
			}
		}
		return false
	})
	if err != nil || waited != nil {
		return "", true, "", cmp.Or(err, waited)
	}
	_, err = recoverAt(ctx, url, contract.RecoverParams{Done: []string{kept.ID}})
	return kept.Text, true, kept.ID, err
}

func dialAs(ctx context.Context, url, thread string) (*endpoint.ClientConn, error) {
	return endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: harnesstest.Key, Agent: testAgent})
}

// keptFor is the answers kept for thread at url, as a two-phase recover
// hands them over.
func keptFor(ctx context.Context, url, thread string) ([]contract.RecoveredAnswer, error) {
	res, err := recoverAt(ctx, url, contract.RecoverParams{TwoPhase: true})
	var out []contract.RecoveredAnswer
	for _, k := range res.Answers {
		if k.Thread == thread {
			out = append(out, k)
		}
	}
	return out, err
}

func recoverAt(ctx context.Context, url string, p contract.RecoverParams) (contract.RecoverResult, error) {
	var res contract.RecoverResult
	x, err := dialAs(ctx, url, "default")
	if err != nil {
		return res, err
	}
	c := acp.NewClient(context.Background(), x, func(string, json.RawMessage) {})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return res, err
	}
	raw, err := c.Conn().Call(ctx, contract.MethodRecover, p)
	if err != nil {
		return res, err
	}
	return res, json.Unmarshal(raw, &res)
}

// Messages sent at the same instant to harnesses sharing a store, as
// lnk agent chat send sends them, each get an answer that saw them,
// streamed or, steered, kept for them by the process they were sent to:
// none waits in vain, whether the message was stored before the running
// turn's own (between its lease and its message), or after that turn's
// last look. Every message is stored once, numbered without a gap,
// answered by one turn, and each steered message has one answer kept.
func TestSteeredAlwaysAnswered(t *testing.T) {
	for _, driver := range []string{"gcs", "sqlite"} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", driver, procs), func(t *testing.T) {
				var drivers func(store.Paths) (map[string]store.Conversations, error)
				if driver == "gcs" {
					drivers = gcsDrivers(t)
				} else {
					drivers = sqliteShared(t)
				}
				var rigs []*rig
				for range procs {
					r := newRig(t, func(c *harness.Config) {
						c.Drivers = drivers
						c.Provider = func(model.Route) (model.Provider, error) { return sawAll{}, nil }
					})
					r.SetSettings(func(s *harness.Settings) { s.Conversations = driver })
					rigs = append(rigs, r)
				}
				sendersAtOnce(t, rigs, drivers, driver, 8, 4)
			})
		}
	}
}

// sendersAtOnce sends rounds of n messages at once to rigs, alternating,
// in one link: thread, and checks what TestSteeredAlwaysAnswered says.
func sendersAtOnce(t *testing.T, rigs []*rig, drivers func(store.Paths) (map[string]store.Conversations, error), driver string, rounds, n int) {
	const thread = "link:same"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	type sent struct {
		text, answer, id string
		steered          bool
		err              error
		took             time.Duration
	}
	var all []sent
	steered, waited := 0, 0
	for round := range rounds {
		out := make([]sent, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			out[i].text = fmt.Sprintf("m-%d-%d", round, i)
			url := rigs[(round+i)%len(rigs)].URL
			wg.Go(func() {
				<-start
				s := &out[i]
				began := time.Now()
				s.answer, s.steered, s.id, s.err = sendAsLnk(ctx, url, thread, s.text, 15*time.Second)
				s.took = time.Since(began)
			})
		}
		close(start)
		wg.Wait()
		for _, s := range out {
			if s.steered {
				steered++
			}
			if s.err != nil {
				waited++
				t.Errorf("%s (steered %v): %v", s.text, s.steered, s.err)
			} else if !strings.Contains(s.answer+" ", " "+s.text+" ") && (!s.steered || !strings.HasPrefix(s.answer, "saw m-")) {
				// A steered message is answered by the first answer kept
				// after it was sent (lnk agent chat send's rule): with
				// others sent at once, maybe the one kept for another.
				t.Errorf("%s (steered %v) answered %q", s.text, s.steered, s.answer)
			}
		}
		all = append(all, out...)
		if testing.Verbose() {
			var took []string
			for _, s := range out {
				took = append(took, fmt.Sprintf("%s %v %v", s.text, s.steered, s.took.Round(time.Millisecond)))
			}
			t.Log(strings.Join(took, ", "))
		}
	}
	t.Logf("%d messages in %d rounds to %d processes: %d steered, %d without an answer", rounds*n, rounds, len(rigs), steered, waited)
	ev := events(t, rigs[0], drivers, driver, thread)
	msgs := 0
	var lastMsg int64
	answered := map[int64]int64{} // the last message an answer saw → that answer
	for i, e := range ev {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d numbered %d", i+1, e.Seq)
		}
		switch {
		case e.Kind == store.KindMessage:
			msgs++
			lastMsg = e.Seq
		case store.FinalAnswer(e):
			saw := lastMsg
			if e.Seen != 0 {
				saw = 0
				for _, m := range ev[:e.Seen] {
					if m.Kind == store.KindMessage {
						saw = m.Seq
					}
				}
			}
			if was, ok := answered[saw]; ok {
				t.Errorf("message #%d answered twice, by #%d and #%d", saw, was, e.Seq)
			}
			answered[saw] = e.Seq
		}
	}
	if msgs != rounds*n {
		t.Errorf("%d messages stored, want %d", msgs, rounds*n)
	}
	if harness.Waiting(ev) {
		t.Error("the last message is still waiting")
	}
	// Each steered message had one answer kept: taken by its sender, or
	// left when two senders took the same.
	taken := map[string]bool{}
	for _, s := range all {
		if s.id != "" {
			taken[s.id] = true
		}
	}
	left := func() int {
		n := 0
		for _, r := range rigs {
			k, err := keptFor(ctx, r.URL, thread)
			if err != nil {
				t.Error(err)
			}
			n += len(k)
		}
		return n
	}
	// A sender may take an answer kept for another of the same process
	// before its own is kept: that one comes yet.
	testwait.For(t, 10*time.Second, "an answer kept for each steered message", func() bool { return len(taken)+left() >= steered })
	if n := left(); len(taken)+n != steered {
		t.Errorf("%d answers kept (%d taken, %d left) for %d steered messages", len(taken)+n, len(taken), n, steered)
	}
}

// events reads thread's events from r's driver.
func events(t *testing.T, r *rig, drivers func(store.Paths) (map[string]store.Conversations, error), driver, thread string) []store.Event {
	t.Helper()
	ds, err := drivers(r.Paths())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ds[driver].Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ds[driver].(store.Closer); ok {
		c.Close()
	}
	return ev
}

// A message told steered whose turn's process died before it saw it
// (its lease left to run out) is answered all the same: the process that
// told it steered takes the lease once it is free, answers it in a turn
// nobody waits for, and keeps that answer for it.
func TestSteeredHolderGone(t *testing.T) {
	r := newRig(t)
	const thread = "link:gone"
	r.Model.Push(model.Response{Text: "hello"}, model.Response{Text: "still here"})
	if _, x, err := r.Say(thread, "m-first", nil); err != nil || x.Text() != "hello" {
		t.Fatalf("the first message: %v", err)
	}
	ds, err := testDrivers(r.Paths())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ds[log.Name].Lease(t.Context(), thread, "a-process-killed", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res, _, err := r.Say(thread, "m-second", nil)
	if err != nil || !res.Steered() {
		t.Fatalf("the message while the lease is held: %+v, %v", res, err)
	}
	if k := r.recoverWait(t, true, thread); k.Text != "still here" {
		t.Fatalf("kept for the steered message: %+v", k)
	}
	if ev := r.Events(thread); harness.Waiting(ev) || count(ev, store.FinalAnswer) != 2 {
		t.Fatalf("events %+v", ev)
	}
}
