package store

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// An answer kept for lnk agent chat (KeepHeld) is left by a single-phase
// recover, handed over by a two-phase one until done, and found by
// KeptAfter for the message it answers.
func TestKeepHeld(t *testing.T) {
	p, err := For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := &Folders{Paths: p}
	ctx := t.Context()
	sent := time.Now()
	held, err := f.KeepHeld(ctx, "link:notes", "for the chat", time.Time{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Keep(ctx, "link:notes", "caller gone", time.Time{}, 6); err != nil {
		t.Fatal(err)
	}
	res, err := f.Recover(ctx, contract.RecoverParams{})
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Text != "caller gone" {
		t.Fatalf("single phase handed over %+v, %v", res.Answers, err)
	}
	res, err = f.Recover(ctx, contract.RecoverParams{TwoPhase: true})
	if err != nil || len(res.Answers) != 1 || res.Answers[0].ID != held {
		t.Fatalf("two-phase handed over %+v, %v", res.Answers, err)
	}
	k, ok, err := f.KeptAfter(ctx, "link:notes", sent)
	if err != nil || !ok || k.Text != "for the chat" || !k.Held || k.Seq != 4 {
		t.Fatalf("KeptAfter = %+v, %v, %v", k, ok, err)
	}
	if all, _ := f.Pending(ctx); len(all) != 0 {
		t.Fatalf("left %+v", all)
	}
	if _, err := f.KeepHeld(ctx, "no thread", "x", time.Time{}, 0); err == nil {
		t.Fatal("kept for a thread the contract refuses")
	}
}
