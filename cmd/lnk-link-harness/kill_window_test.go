package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// summaryAsked is the start of the harness's request for a summary.
const summaryAsked = "[Link Harness: the start of this conversation is leaving your window."

// windowHome is a home whose agent's window is 3,000 tokens, so a
// summary is due after a few turns.
func windowHome(t *testing.T) string {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Config(), []byte(`{"window":{"max":3000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func windowText(i int) string {
	return fmt.Sprintf("Message %d: %s", i, strings.Repeat("about the garden and the roses ", 6))
}

// asked is how many of fake's requests ask for a summary.
func asked(fake *fakeprovider.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if strings.HasPrefix(r.LastUserText, summaryAsked) {
			n++
		}
	}
	return n
}

// TestKillAfterAnswer: the real program SIGKILLed while it asks for a
// summary after its answer loses only the summary: the answer was
// handed over and is kept, no summary is written, and once started again
// the next turn answers with the same window and summarizes after it.
func TestKillAfterAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real program")
	}
	bin := buildHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := childEnv(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "LNK_LEASE_TTL": "1500ms"})
	const thread = "telegram:77"

	// How many turns until the first summary: the same conversation, once.
	home := windowHome(t)
	proc := startProc(t, bin, home, keyFile, env)
	for i := 1; asked(fake) == 0; i++ {
		if i > 40 {
			t.Fatal("no summary asked in 40 turns")
		}
		if o := bridgeSend(proc.url, []byte(testKey), thread, windowText(i)); !o.responded {
			t.Fatalf("turn %d not answered", i)
		}
	}
	proc.stop(t)
	k := 0 // the turn after whose answer it was asked
	for _, e := range readEvents(t, home, thread) {
		if e.Kind == store.KindSummary {
			break
		}
		if e.Kind == store.KindMessage {
			k++
		}
	}

	// Again, on a home of its own, the summary held until the kill.
	home = windowHome(t)
	proc = startProc(t, bin, home, keyFile, env)
	for i := 1; i < k; i++ {
		if o := bridgeSend(proc.url, []byte(testKey), thread, windowText(i)); !o.responded {
			t.Fatalf("turn %d not answered", i)
		}
	}
	before := asked(fake)
	fake.Script(fakeprovider.Turn{Text: "the answer kept"}, fakeprovider.Turn{Hang: true})
	if o := bridgeSend(proc.url, []byte(testKey), thread, windowText(k)); !o.responded || o.text != "the answer kept" {
		t.Fatalf("turn %d: %+v", k, o)
	}
	testwait.For(t, 20*time.Second, "the summary to be asked", func() bool { return asked(fake) != before })
	proc.kill()
	events := readEvents(t, home, thread)
	var answer store.Event
	for _, e := range events {
		switch {
		case e.Kind == store.KindSummary:
			t.Fatal("a summary written before the kill")
		case e.Kind == store.KindAnswer && e.Text == "the answer kept":
			answer = e
		}
	}
	if answer.Window == nil {
		t.Fatalf("the answer wasn't kept with its window: %+v", answer)
	}

	// Started again: the next turn answers with the same window, then the
	// summary is asked and written.
	// The killed process's lease runs out first (LNK_LEASE_TTL), so the
	// next message begins a turn rather than joining one.
	p, _ := store.For(home, "main")
	chats := log.Open(p.Chats())
	testwait.For(t, 10*time.Second, "the killed process's lease to run out", func() bool {
		_, err := chats.Lease(t.Context(), thread, "test", time.Second)
		if errors.Is(err, store.ErrLeaseHeld) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := chats.Release(t.Context(), thread, "test"); err != nil {
			t.Fatal(err)
		}
		return true
	})
	proc = startProc(t, bin, home, keyFile, env)
	if o := bridgeSend(proc.url, []byte(testKey), thread, windowText(k+1)); !o.responded {
		t.Fatalf("turn %d after the kill: %+v", k+1, o)
	}
	proc.stop(t) // waits for the summary after the answer
	var next, summary store.Event
	for _, e := range readEvents(t, home, thread) {
		switch {
		case e.Kind == store.KindAnswer && e.Seq > answer.Seq && next.Seq == 0:
			next = e
		case e.Kind == store.KindSummary:
			summary = e
		}
	}
	if next.Window == nil || next.Window.Start != answer.Window.Start {
		t.Fatalf("the turn after the kill answered %q with window %+v, the killed one's %+v", next.Text, next.Window, answer.Window)
	}
	if summary.Seq <= next.Seq || summary.Window == nil || summary.Window.Start <= answer.Window.Start {
		t.Fatalf("summary %+v after answer %d", summary, next.Seq)
	}
}
