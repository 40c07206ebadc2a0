package send_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/send"
)

func target(r *harnesstest.Rig) send.Target {
	return send.Target{URL: r.URL, Key: r.Key, Agent: harnesstest.Agent}
}

func reminder(id, thread string) send.Message {
	return send.Message{ID: id, Since: time.Now(), Thread: thread, From: "schedule:r1", Text: "call the bank"}
}

// pending is thread's answers kept for _link/recover, as lnk agent chat
// asks for them (two-phase).
func pending(t *testing.T, r *harnesstest.Rig, thread string) []contract.RecoveredAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.URL, Key: r.Key, Agent: harnesstest.Agent})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.Recover(ctx, contract.RecoverParams{TwoPhase: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []contract.RecoveredAnswer
	for _, a := range res.Answers {
		if a.Thread == thread {
			out = append(out, a)
		}
	}
	return out
}

// A message that doesn't wait is stored from its sender with its id, and
// its sender goes once the harness has it: the turn's answer is kept for
// _link/recover, where lnk agent chat (a link: thread) or Link's bridge
// (another, telegram:5) takes it (TestSendHandsOff).
func TestSendHandsOff(t *testing.T) {
	r := harnesstest.New(t)
	r.Model.Push(model.Response{Text: "Time to call the bank."})
	res, err := send.Send(t.Context(), target(r), reminder("r1.1", "link:chat"))
	if err != nil || res.Already {
		t.Fatalf("send: %+v, %v", res, err)
	}
	testwait.For(t, 10*time.Second, "the answer kept for recover", func() bool { return len(pending(t, r, "link:chat")) == 1 })
	if got := pending(t, r, "link:chat")[0].Text; got != "Time to call the bank." {
		t.Fatalf("kept answer %q", got)
	}
	ev := r.Events("link:chat")
	if ev[0].From != "schedule:r1" || ev[0].MessageID != "r1.1" || ev[0].Text != "call the bank" {
		t.Fatalf("stored %+v", ev[0])
	}
	// A bridged thread's the same: kept for the bridge's _link/recover,
	// which takes it to its chat.
	r.Model.Push(model.Response{Text: "Bank time."})
	if _, err := send.Send(t.Context(), target(r), reminder("r1.2", "telegram:5")); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the bridged thread's answer kept for recover", func() bool { return len(pending(t, r, "telegram:5")) == 1 })
	if got := pending(t, r, "telegram:5")[0].Text; got != "Bank time." {
		t.Fatalf("kept answer %q", got)
	}
}

// A message that waits is answered with the turn's answer; sent again
// (its sender crashed before it knew) it is answered already received,
// naming the event, and the model is asked once (TestSendWaitsOnce).
func TestSendWaitsOnce(t *testing.T) {
	r := harnesstest.New(t)
	r.Model.Push(model.Response{Text: "three results"})
	m := reminder("task.t1", "link:task-t1")
	m.From, m.Wait = "task:t1", true
	res, err := send.Send(t.Context(), target(r), m)
	if err != nil || res.Answer != "three results" || res.StopReason != acp.StopEndTurn {
		t.Fatalf("send: %+v, %v", res, err)
	}
	again, err := send.Send(t.Context(), target(r), m)
	if err != nil || !again.Already || again.Seq != 1 || again.Answer != "" {
		t.Fatalf("sent again: %+v, %v", again, err)
	}
	if n := len(r.Requests("link:task-t1")); n != 1 {
		t.Fatalf("the model was asked %d times", n)
	}
}

// A message the harness refuses (an agent it doesn't run, a thread the
// contract refuses) is a refusal, which a try again meets again
// (TestSendRefused).
func TestSendRefused(t *testing.T) {
	r := harnesstest.New(t)
	tg := target(r)
	tg.Agent = "nobody"
	if _, err := send.Send(t.Context(), tg, reminder("r1.1", "link:chat")); !send.Refused(err) || !errors.Is(err, endpoint.ErrUnknownAgent) {
		t.Fatalf("an agent the endpoint doesn't run: %v", err)
	}
	if _, err := send.Send(t.Context(), target(r), reminder("r1.1", "link:../x")); !send.Refused(err) {
		t.Fatalf("a thread the contract refuses: %v", err)
	}
	if _, err := send.Send(t.Context(), send.Target{URL: r.URL, Key: []byte("wrong key 0123456789")}, reminder("r1.1", "link:chat")); !send.Refused(err) {
		t.Fatalf("a wrong key: %v", err)
	}
}

// sent collects what a Deliverer tells OnSent.
type sent struct {
	mu  sync.Mutex
	got []send.Result
	err []error
	ch  chan struct{}
}

func newSent() *sent { return &sent{ch: make(chan struct{}, 100)} }

func (s *sent) on(_ send.Message, r send.Result, err error) {
	s.mu.Lock()
	s.got = append(s.got, r)
	s.err = append(s.err, err)
	s.mu.Unlock()
	s.ch <- struct{}{}
}

func (s *sent) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.ch:
	case <-time.After(20 * time.Second):
		t.Fatal("nothing sent")
	}
}

func startDeliverer(t *testing.T, dir string, s *sent) *send.Deliverer {
	t.Helper()
	box, err := send.OpenOutbox(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &send.Deliverer{Outbox: box, OnSent: s.on, RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	d.Start(ctx)
	t.Cleanup(func() { cancel(); d.Wait() })
	return d
}

// A message recorded, sent, and not yet forgotten when its sender crashed
// is sent again by the next sender's start: answered already received,
// forgotten, and the turn it began is the only one (TestDelivererAfterCrash).
func TestDelivererAfterCrash(t *testing.T) {
	r := harnesstest.New(t)
	r.Model.Push(model.Response{Text: "reminded"})
	dir := filepath.Join(t.TempDir(), "outbox")
	box, err := send.OpenOutbox(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := box.Add(reminder("r1.1", "telegram:5"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send.Send(t.Context(), target(r), m); err != nil { // the try before the crash
		t.Fatal(err)
	}
	s := newSent()
	d := startDeliverer(t, dir, s)
	d.SetTarget(target(r))
	s.wait(t)
	if !s.got[0].Already || s.got[0].Seq != 1 || s.err[0] != nil {
		t.Fatalf("sent again: %+v, %v", s.got[0], s.err[0])
	}
	if left, _, _ := box.Pending(); len(left) != 0 {
		t.Fatalf("%d messages left in the outbox", len(left))
	}
	testwait.For(t, 10*time.Second, "the turn's answer", func() bool { return count(r.Events("telegram:5"), store.FinalAnswer) == 1 })
	if n := count(r.Events("telegram:5"), func(e store.Event) bool { return e.Kind == store.KindMessage }); n != 1 {
		t.Fatalf("%d messages stored, want one", n)
	}
}

// A message that can't reach the agent (nothing answers its port) waits
// in the outbox and is tried again, with a pause, until it does
// (TestDelivererTriesAgain).
func TestDelivererTriesAgain(t *testing.T) {
	r := harnesstest.New(t)
	r.Model.Push(model.Response{Text: "reminded"})
	s := newSent()
	d := startDeliverer(t, filepath.Join(t.TempDir(), "outbox"), s)
	down := target(r)
	down.URL = "http://127.0.0.1:1/acp"
	d.SetTarget(down)
	m, err := d.Send(reminder("", "telegram:5"))
	if err != nil {
		t.Fatal(err)
	}
	if contract.CheckMessageID(m.ID) != nil {
		t.Fatalf("made id %q", m.ID)
	}
	<-d.Idle() // tried, and waiting to be tried again
	select {
	case <-s.ch:
		t.Fatal("told sent while the agent can't be reached")
	default:
	}
	d.SetTarget(target(r))
	s.wait(t)
	if s.err[0] != nil || s.got[0].Already {
		t.Fatalf("sent: %+v, %v", s.got[0], s.err[0])
	}
	if n := count(r.Events("telegram:5"), func(e store.Event) bool { return e.MessageID == m.ID }); n != 1 {
		t.Fatalf("%d messages of %s stored", n, m.ID)
	}
}

// A message the agent refuses is told with its refusal and forgotten,
// never tried again (TestDelivererRefused).
func TestDelivererRefused(t *testing.T) {
	r := harnesstest.New(t)
	s := newSent()
	dir := filepath.Join(t.TempDir(), "outbox")
	d := startDeliverer(t, dir, s)
	tg := target(r)
	tg.Agent = "nobody"
	d.SetTarget(tg)
	if _, err := d.Send(reminder("r1.1", "telegram:5")); err != nil {
		t.Fatal(err)
	}
	s.wait(t)
	if !send.Refused(s.err[0]) {
		t.Fatalf("told %v, want the refusal", s.err[0])
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("the outbox keeps %d files", len(names))
	}
}

// The outbox is its owner's alone (0700, each file 0600); a file of it
// that isn't a message is named and left, the others read; a message
// recorded twice is one; an id with / and : names one file in it
// (TestOutbox).
func TestOutbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scheduler", "outbox")
	box, err := send.OpenOutbox(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := reminder("schedule:r1/2026-12-07T09:00:00Z", "telegram:5")
	for range 2 {
		if _, err := box.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "torn.json"), []byte(`{"id":"torn","thr`), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, bad, err := box.Pending()
	if err != nil || len(msgs) != 1 || msgs[0].ID != m.ID || len(bad) != 1 || !errors.Is(bad[0], send.ErrCorruptMessage) {
		t.Fatalf("pending %+v, bad %v, %v", msgs, bad, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		if e.Name() != "torn.json" && info.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", e.Name(), info.Mode().Perm())
		}
	}
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 {
		t.Errorf("the outbox is %v, want 0700", info.Mode().Perm())
	}
	if err := box.Done(m.ID); err != nil {
		t.Fatal(err)
	}
	if msgs, _, _ := box.Pending(); len(msgs) != 0 {
		t.Fatalf("pending after done: %+v", msgs)
	}
	if _, err := box.Add(send.Message{ID: "r1", Thread: "telegram:5", From: "schedule:r1", Text: " "}); err == nil {
		t.Fatal("a message saying nothing was recorded")
	}
}

func count(events []store.Event, f func(store.Event) bool) int {
	n := 0
	for _, e := range events {
		if f(e) {
			n++
		}
	}
	return n
}
