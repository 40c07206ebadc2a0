package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
