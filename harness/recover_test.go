package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/log"
)

// crashed writes events as a process that crashed mid-turn leaves them.
func crashed(t *testing.T, home, thread string, events ...store.Event) {
	t.Helper()
	p, err := store.For(home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	d := log.Open(p.Chats())
	for i, e := range events {
		e.Seq = int64(i + 1)
		e.Time = time.Now().UTC()
		if err := d.Append(context.Background(), thread, e); err != nil {
			t.Fatal(err)
		}
	}
}

// Turns a crash left unfinished are finished, each in a task of its own,
// when the harness starts: a call that was answered is never made again,
// one left without an answer is told to the model as unanswered, and the
// answers are kept for _link/recover.
func TestCrashRecovery(t *testing.T) {
	r := newRig(t)
	msg := store.Event{Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:15 UTC, telegram]", Text: "search twice"}
	crashed(t, r.Home, "telegram:1", msg,
		store.Event{Kind: store.KindAnswer, Calls: []store.ToolCall{{ID: "a", Name: "memory__search", Input: "{}"}, {ID: "b", Name: "memory__write", Input: "{}"}}, Model: "offline", Seen: 1},
		store.Event{Kind: store.KindToolResult, CallID: "a", Tool: "memory__search", Text: "found it"})
	crashed(t, r.Home, "telegram:2", store.Event{Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:16 UTC, telegram]", Text: "never answered"})
	crashed(t, r.Home, "telegram:3", msg, store.Event{Kind: store.KindAnswer, Text: "answered", Seen: 1})
	r.Model.Push(model.Response{Text: "finished after the crash"}, model.Response{Text: "finished after the crash"})
	r.Harness.Start(testAgent)
	r.Harness.WaitTasks() // the sweep, and the turns it finished

	got := map[string]string{}
	for _, a := range r.recover(t, map[string]any{}).Answers {
		got[a.Thread] = a.Text
	}
	want := map[string]string{"telegram:1": "finished after the crash", "telegram:2": "finished after the crash"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("handed over (-want +got):\n%s", diff)
	}
	if r.Tools.Total() != 0 {
		t.Fatalf("%d calls made again", r.Tools.Total())
	}
	req := r.Requests("telegram:1")
	if len(req) != 1 {
		t.Fatalf("%d model calls", len(req))
	}
	said := scripted.RequestText(req[0])
	if !strings.Contains(said, "found it") || !strings.Contains(said, "Unanswered") {
		t.Fatalf("the model was given:\n%s", said)
	}
	results := req[0].Messages[len(req[0].Messages)-1].Parts
	if len(results) != 2 || results[0].ID != "a" || results[1].ID != "b" || !results[1].IsError {
		t.Fatalf("the calls' answers %+v", results)
	}
	if len(r.Requests("telegram:3")) != 0 {
		t.Fatal("an answered conversation was answered again")
	}
	ev := r.Events("telegram:1")
	if count(ev, isKind(store.KindToolResult)) != 1 || !store.FinalAnswer(ev[len(ev)-1]) {
		t.Fatalf("events after %+v", ev)
	}
	// Swept again, nothing is left to finish.
	if err := r.Harness.Sweep(t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	r.Harness.WaitTasks() // and the sweep the recover started
	if n := len(r.Model.Requests()); n != 2 {
		t.Fatalf("%d model calls after a second sweep", n)
	}
}

// A conversation whose lease another holder has is left to it: a sweep
// finishes only turns nobody runs.
func TestSweepLeavesHeld(t *testing.T) {
	r := newRig(t)
	crashed(t, r.Home, "telegram:4", store.Event{Kind: store.KindMessage, Text: "running elsewhere"})
	p, _ := store.For(r.Home, testAgent)
	if _, err := log.Open(p.Chats()).Lease(t.Context(), "telegram:4", "another-process", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.Harness.Sweep(t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	if n := len(r.Model.Requests()); n != 0 {
		t.Fatalf("a turn another process runs was taken: %d calls", n)
	}
}

// A turn finished after a crash is held as its answer is stored, as a
// caller's is: a kill between its event's write and the answer's keep
// (here the keep fails: answers.json can't be read, which leaves the disk
// as the kill does) loses nothing, and a recover hands the answer over,
// once. Before, only the event was left, its message answered, so no
// sweep finished it again and nothing was ever handed over.
func TestFinishedKeptThroughKill(t *testing.T) {
	r := newRig(t)
	thread := "telegram:5"
	crashed(t, r.Home, thread, store.Event{Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:15 UTC, telegram]", Text: "answer after the crash"})
	p, err := store.For(r.Home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(dir, folder.Answers)
	if err := os.Mkdir(blocked, 0o700); err != nil { // the keep fails
		t.Fatal(err)
	}
	r.Model.Push(model.Response{Text: "finished after the crash"})
	if err := r.Harness.Sweep(t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	if ev := r.Events(thread); harness.Waiting(ev) {
		t.Fatalf("the sweep left the message unanswered: %+v", ev)
	}
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	got := r.recover(t, map[string]any{}).Answers
	if len(got) != 1 || got[0].Thread != thread || got[0].Text != "finished after the crash" {
		t.Fatalf("handed over %+v, want the finished answer once", got)
	}
	if again := r.recover(t, map[string]any{}).Answers; len(again) != 0 {
		t.Fatalf("handed over again: %+v", again)
	}
}
