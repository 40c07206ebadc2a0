package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// TestKeepTellingTold: an answer kept while told is pending like any
// other until Told lets it go; the others stay.
func TestKeepTellingTold(t *testing.T) {
	ctx := context.Background()
	p, err := For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Folders{Paths: p}
	other, err := f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.TellingID("telegram:42")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.KeepTelling(ctx, id, "telegram:42", "being told", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := f.KeepTelling(ctx, "signal:1~ab", "telegram:42", "x", time.Time{}); err == nil {
		t.Error("kept with another folder's id")
	}
	all, err := f.Pending(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("pending %v, %v: want both", all, err)
	}
	if err := f.Told(ctx, id); err != nil {
		t.Fatal(err)
	}
	all, err = f.Pending(ctx)
	if err != nil || len(all) != 1 || all[0].ID != other {
		t.Fatalf("pending after told %v, %v: want only %s", all, err, other)
	}
	if err := f.Told(ctx, id); err != nil {
		t.Errorf("told twice: %v", err)
	}
	if err := f.Told(ctx, "nonsense"); err != nil {
		t.Errorf("told a bad id: %v", err)
	}
	if err := f.Done(ctx, []string{other}); err != nil {
		t.Fatal(err)
	}
	id, _ = f.TellingID("telegram:42")
	if err := f.KeepTelling(ctx, id, "telegram:42", "alone", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Told(ctx, id); err != nil {
		t.Fatal(err)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Errorf("pending %v, %v: want none", all, err)
	}
}

// RecoverExcept passes over the answers being told, in both phases, and
// hands over the rest as Recover does.
func TestRecoverExcept(t *testing.T) {
	ctx := context.Background()
	p, err := For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Folders{Paths: p}
	other, err := f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := f.TellingID("telegram:42")
	if err := f.KeepTelling(ctx, id, "telegram:42", "being told", time.Time{}); err != nil {
		t.Fatal(err)
	}
	telling := func(k string) bool { return k == id }
	res, err := f.RecoverExcept(ctx, contract.RecoverParams{TwoPhase: true}, telling)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].ID != other {
		t.Fatalf("two-phase: %+v, %v: want only %s", res, err, other)
	}
	res, err = f.RecoverExcept(ctx, contract.RecoverParams{}, telling)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "a caller gone's" {
		t.Fatalf("single phase: %+v, %v", res, err)
	}
	all, err := f.Pending(ctx)
	if err != nil || len(all) != 1 || all[0].ID != id {
		t.Fatalf("left after a single phase: %+v, %v: want the one being told", all, err)
	}
	// Once no longer told (its process killed), it is handed over.
	res, err = f.RecoverExcept(ctx, contract.RecoverParams{}, func(string) bool { return false })
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "being told" {
		t.Fatalf("after: %+v, %v", res, err)
	}
}

// An answer kept while told whose teller went (killed before it told)
// is moved into its conversation's answers.json at the next recover and
// handed over once; a file left after it was moved (a kill between the
// two) hands nothing over twice; an empty one (a machine's stop) is
// passed over; Told removes the file.
func TestTellingAdopted(t *testing.T) {
	ctx := context.Background()
	p, err := For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Folders{Paths: p}
	id, _ := f.TellingID("telegram:42")
	if err := f.KeepTelling(ctx, id, "telegram:42", "never told", time.Time{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.Chats(), TellingDir, id+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Chats(), TellingDir, "telegram-7~00.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.KeepTelling(ctx, id, "telegram:42", "again", time.Time{}); err == nil {
		t.Error("kept twice under one id")
	}
	res, err := f.Recover(ctx, contract.RecoverParams{})
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "never told" || res.Answers[0].Thread != "telegram:42" {
		t.Fatalf("recover %+v, %v: want the answer never told", res, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("its file is still there: %v", err)
	}
	// Its file back as a kill between the move and the removal leaves it,
	// with the answer still kept: handed over once in all.
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var k Kept
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	dir, _ := p.Conversation("telegram:42")
	if err := writeAnswers(dir, []Kept{k}); err != nil {
		t.Fatal(err)
	}
	res, err = f.RecoverExcept(ctx, contract.RecoverParams{TwoPhase: true}, func(string) bool { return false })
	if err != nil || len(res.Answers) != 1 || res.Answers[0].ID != id {
		t.Fatalf("two-phase %+v, %v: want it once", res, err)
	}
	if err := f.Done(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Errorf("pending %+v, %v: want none", all, err)
	}
	id2, _ := f.TellingID("signal:15551234567")
	if err := f.KeepTelling(ctx, id2, "signal:15551234567", "told", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Told(ctx, id2); err != nil {
		t.Fatal(err)
	}
	if err := f.Told(ctx, "../x~1"); err != nil {
		t.Errorf("told a path: %v", err)
	}
	if res, err := f.Recover(ctx, contract.RecoverParams{}); err != nil || len(res.Answers) != 0 {
		t.Errorf("recover after told: %+v, %v", res, err)
	}
	if threads, err := Threads(ctx, p); err != nil || len(threads) != 1 || threads[0] != "telegram:42" {
		t.Errorf("threads %v, %v: the telling folder is none", threads, err)
	}
}

// An answer kept while told names the event it is about to be stored as:
// Telling lists it with its number and time, a keep again writes it over
// whole (the append retried under another number), leaving one file, and
// a keep an older harness wrote, naming no event, reads with none.
func TestKeepTellingEvent(t *testing.T) {
	ctx := context.Background()
	p, err := For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Folders{Paths: p}
	id, _ := f.TellingID("telegram:42")
	at := time.Date(2026, 11, 30, 10, 15, 0, 123456789, time.FixedZone("x", 3600))
	k := Kept{ID: id, Thread: "telegram:42", Text: "being told", Seq: 7, EventTime: at}
	if err := f.KeepTellingEvent(ctx, k, false); err != nil {
		t.Fatal(err)
	}
	all, err := f.Telling(ctx)
	if err != nil || len(all) != 1 || all[0].Seq != 7 || !all[0].EventTime.Equal(at) || all[0].Text != "being told" {
		t.Fatalf("telling %+v, %v: want event 7 at %v", all, err, at)
	}
	if err := f.KeepTellingEvent(ctx, k, false); err == nil {
		t.Error("kept twice under one id, not again")
	}
	k.Seq, k.EventTime = 9, at.Add(time.Millisecond)
	if err := f.KeepTellingEvent(ctx, k, true); err != nil {
		t.Fatal(err)
	}
	all, err = f.Telling(ctx)
	if err != nil || len(all) != 1 || all[0].Seq != 9 || !all[0].EventTime.Equal(at.Add(time.Millisecond)) {
		t.Fatalf("telling after again %+v, %v: want event 9 alone", all, err)
	}
	entries, err := os.ReadDir(filepath.Join(p.Chats(), TellingDir))
	if err != nil || len(entries) != 1 {
		t.Fatalf("files %v, %v: want the keep alone", entries, err)
	}
	bad := k
	bad.ID = "signal:1~ab"
	if err := f.KeepTellingEvent(ctx, bad, true); err == nil {
		t.Error("kept again with another folder's id")
	}
	// An older harness's keep: no event named, and still handed over.
	old, _ := f.TellingID("telegram:43")
	b := []byte(`{"id":"` + old + `","thread":"telegram:43","text":"older","kept":"2026-11-30T10:00:00Z"}`)
	if err := os.WriteFile(filepath.Join(p.Chats(), TellingDir, old+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	all, err = f.Telling(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("telling %+v, %v: want both", all, err)
	}
	for _, k := range all {
		if k.ID == old && (!k.EventTime.IsZero() || k.Seq != 0) {
			t.Errorf("the older keep reads as naming event %d at %v", k.Seq, k.EventTime)
		}
	}
	if err := f.Told(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := f.Recover(ctx, contract.RecoverParams{})
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "older" {
		t.Fatalf("recover %+v, %v: want the older keep", res, err)
	}
	// A keep that names no event writes no time.
	id, _ = f.Keep(ctx, "telegram:42", "a caller gone's", time.Time{}, 3)
	dir, _ := p.Conversation("telegram:42")
	raw, err := os.ReadFile(filepath.Join(dir, AnswersFile))
	if err != nil || strings.Contains(string(raw), "eventTime") {
		t.Errorf("answers.json %s, %v: want no eventTime", raw, err)
	}
	if _, err := f.Telling(canceled()); err == nil {
		t.Error("listed under a context ended")
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
