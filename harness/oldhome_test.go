package harness_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// A home an older Link wrote and was killed in: a turn's answer held in
// chats/telling, its event stored, and two answers pending in a
// conversation's answers.json under the old names ("kept", "held": one
// kept for lnk agent chat). This harness, started on it, hands the held
// answer and the pending one over once, never the one for the chat, and
// the old folder is gone.
func TestOldHomeDelivered(t *testing.T) {
	r := newRig(t)
	at := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	stored(t, r.Home, "telegram:1",
		store.Event{Seq: 1, Time: at, Kind: store.KindMessage, Text: "hi"},
		store.Event{Seq: 2, Time: at.Add(time.Second), Kind: store.KindAnswer, Text: "held", Seen: 1})
	p, err := store.For(r.Home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(p.Chats(), "telling")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(old, "telegram-1~0a1b2c.json"),
		`{"id":"telegram-1~0a1b2c","thread":"telegram:1","text":"held","kept":"2026-11-30T10:15:01Z","seq":2,"eventTime":"2026-11-30T10:15:01Z"}`)
	dir, err := p.Conversation("telegram:3")
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "answers.json"),
		`[{"id":"telegram-3~3c4d","thread":"telegram:3","text":"pending","kept":"2026-11-30T09:00:00Z"},
		{"id":"telegram-3~5e6f","thread":"telegram:3","text":"for lnk agent chat","kept":"2026-11-30T09:01:00Z","held":true}]`)

	got := handedOver(t, r, "both answers", func(all []string) bool { return len(all) >= 2 })
	slices.Sort(got)
	if want := []string{"held", "pending"}; !slices.Equal(got, want) {
		t.Fatalf("handed over %q, want %q once each", got, want)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("chats/telling still there: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(p.Chats(), delivery.SendingDir)); err != nil {
		t.Errorf("chats/%s: %v", delivery.SendingDir, err)
	}
}
