package store

import (
	"context"
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
