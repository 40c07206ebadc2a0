package delivery

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/router"
)

// TestKeepWhileSending: an answer held while it is sent is pending like
// any other until release lets it go; the others stay.
func TestKeepWhileSending(t *testing.T) {
	ctx := context.Background()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	other, err := f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id, err := NewID("telegram:42")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "being told"}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Hold(ctx, Answer{ID: "signal:1~ab", Thread: "telegram:42", Text: "x"}, false); err == nil {
		t.Error("kept with another folder's id")
	}
	all, err := f.Pending(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("pending %v, %v: want both", all, err)
	}
	if err := f.release(id); err != nil {
		t.Fatal(err)
	}
	all, err = f.Pending(ctx)
	if err != nil || len(all) != 1 || all[0].ID != other {
		t.Fatalf("pending after release %v, %v: want only %s", all, err, other)
	}
	if err := f.release(id); err != nil {
		t.Errorf("released twice: %v", err)
	}
	if err := f.release("nonsense"); err != nil {
		t.Errorf("released a bad id: %v", err)
	}
	if err := f.Done(ctx, []string{other}); err != nil {
		t.Fatal(err)
	}
	id, _ = NewID("telegram:42")
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "alone"}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.release(id); err != nil {
		t.Fatal(err)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Errorf("pending %v, %v: want none", all, err)
	}
}

// RecoverExcept passes over the answers being sent, in both phases, and
// hands over the rest as Recover does.
func TestRecoverExcept(t *testing.T) {
	ctx := context.Background()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	other, err := f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := NewID("telegram:42")
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "being told"}, false); err != nil {
		t.Fatal(err)
	}
	res, err := handOver(f, true, map[string]bool{id: true})
	if err != nil || len(res) != 1 || res[0].ID != other {
		t.Fatalf("two-phase: %+v, %v: want only %s", res, err, other)
	}
	res, err = handOver(f, false, map[string]bool{id: true})
	if err != nil || len(res) != 1 || res[0].Text != "a caller gone's" {
		t.Fatalf("single phase: %+v, %v", res, err)
	}
	all, err := f.Pending(ctx)
	if err != nil || len(all) != 1 || all[0].ID != id {
		t.Fatalf("left after a single phase: %+v, %v: want the one being sent", all, err)
	}
	// Once no longer being sent (its process killed), it is handed over.
	res, err = handOver(f, false, nil)
	if err != nil || len(res) != 1 || res[0].Text != "being told" {
		t.Fatalf("after: %+v, %v", res, err)
	}
}

// An answer held while it is sent whose sender went (killed before it
// sent it) is moved into its conversation's answers.json at the next
// recover and handed over once; a file left after it was moved (a kill between the
// two) hands nothing over twice; an empty one (a machine's stop) is
// passed over; release removes the file.
func TestSendingAdopted(t *testing.T) {
	ctx := context.Background()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	id, _ := NewID("telegram:42")
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "never told"}, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.Chats(), SendingDir, id+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Chats(), SendingDir, "telegram-7~00.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:42", Text: "again"}, false); err == nil {
		t.Error("kept twice under one id")
	}
	res, err := handOver(f, false, nil)
	if err != nil || len(res) != 1 || res[0].Text != "never told" || res[0].Thread != "telegram:42" {
		t.Fatalf("recover %+v, %v: want the answer never sent", res, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("its file is still there: %v", err)
	}
	// Its file back as a kill between the move and the removal leaves it,
	// with the answer still kept: handed over once in all.
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var k Answer
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	dir, _ := p.Conversation("telegram:42")
	if err := writeAnswers(dir, []Answer{k}); err != nil {
		t.Fatal(err)
	}
	res, err = handOver(f, true, nil)
	if err != nil || len(res) != 1 || res[0].ID != id {
		t.Fatalf("two-phase %+v, %v: want it once", res, err)
	}
	if err := f.Done(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Errorf("pending %+v, %v: want none", all, err)
	}
	id2, _ := NewID("signal:15551234567")
	if err := f.Hold(ctx, Answer{ID: id2, Thread: "signal:15551234567", Text: "told"}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.release(id2); err != nil {
		t.Fatal(err)
	}
	if err := f.release("../x~1"); err != nil {
		t.Errorf("released a path: %v", err)
	}
	if res, err := handOver(f, false, nil); err != nil || len(res) != 0 {
		t.Errorf("recover after release: %+v, %v", res, err)
	}
	if threads, err := router.Threads(ctx, p); err != nil || len(threads) != 1 || threads[0] != "telegram:42" {
		t.Errorf("threads %v, %v: the sending folder is none", threads, err)
	}
}

// An answer held while it is sent names the event it is about to be
// stored as: Sending lists it with its number and time, a keep again writes it over
// whole (the append retried under another number), leaving one file, and
// a file without a hold's checksum is passed over.
func TestSendingNamesItsEvent(t *testing.T) {
	ctx := context.Background()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Answers{Paths: p}
	id, _ := NewID("telegram:42")
	at := time.Date(2026, 11, 30, 10, 15, 0, 123456789, time.FixedZone("x", 3600))
	k := Answer{ID: id, Thread: "telegram:42", Text: "being told", Seq: 7, EventTime: at}
	if err := f.Hold(ctx, k, false); err != nil {
		t.Fatal(err)
	}
	all, err := f.Sending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Answer{k}, all, cmpopts.IgnoreFields(Answer{}, "At")); diff != "" {
		t.Fatalf("sending (-want +got):\n%s", diff)
	}
	if err := f.Hold(ctx, k, false); err == nil {
		t.Error("kept twice under one id, not again")
	}
	k.Seq, k.EventTime = 9, at.Add(time.Millisecond)
	if err := f.Hold(ctx, k, true); err != nil {
		t.Fatal(err)
	}
	all, err = f.Sending(ctx)
	if err != nil || len(all) != 1 || all[0].Seq != 9 || !all[0].EventTime.Equal(at.Add(time.Millisecond)) {
		t.Fatalf("sending after again %+v, %v: want event 9 alone", all, err)
	}
	entries, err := os.ReadDir(filepath.Join(p.Chats(), SendingDir))
	if err != nil || len(entries) != 1 {
		t.Fatalf("files %v, %v: want the keep alone", entries, err)
	}
	bad := k
	bad.ID = "signal:1~ab"
	if err := f.Hold(ctx, bad, true); err == nil {
		t.Error("kept again with another folder's id")
	}
	// An answer's JSON without a hold's checksum is no hold.
	bare, _ := NewID("telegram:43")
	b := []byte(`{"id":"` + bare + `","thread":"telegram:43","text":"bare","at":"2026-11-30T10:00:00Z"}`)
	if err := os.WriteFile(filepath.Join(p.Chats(), SendingDir, bare+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	all, err = f.Sending(ctx)
	if err != nil || len(all) != 1 || all[0].ID != id {
		t.Fatalf("sending %+v, %v: want the hold alone", all, err)
	}
	// A keep that names no event writes no time.
	id, _ = f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	dir, _ := p.Conversation("telegram:42")
	raw, err := os.ReadFile(filepath.Join(dir, folder.Answers))
	if err != nil || strings.Contains(string(raw), "eventTime") {
		t.Errorf("answers.json %s, %v: want no eventTime", raw, err)
	}
	if _, err := f.Sending(canceled()); err == nil {
		t.Error("listed under a context ended")
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
