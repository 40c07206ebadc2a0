package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// End to end through Link Harness, the model scripted on a fake
// Anthropic: in lnk agent chat the owner asks for a reminder, the model
// calls scheduler__schedule (after 2s) on the scheduler lnk started
// beside the agent, and answers; 2 s later the scheduler sends the
// reminder from schedule:<id> to the agent's endpoint, the model answers
// it, and lnk agent chat, waiting for the owner's next message, shows
// that answer as it comes (TestReminderShownByChat).
func TestReminderShownByChat(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "scheduler__schedule", Input: `{"text":"Remind the owner to call the bank","after":"2s"}`}}},
		fakeprovider.Turn{Text: "I'll remind you in 2 seconds."},
		fakeprovider.Turn{Text: "Time to call the bank!"},
	)
	home := t.TempDir()
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	in, w := io.Pipe()
	var out, errb safeBuffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- runChat(ctx, nil, env, in, false, nil, &out, &errb) }()
	io.WriteString(w, "remind me in 2 seconds to call the bank\n")
	waitFor(t, &out, "I'll remind you in 2 seconds.", 30*time.Second)
	set := time.Now()
	waitFor(t, &out, "Time to call the bank!", 30*time.Second)
	shown := time.Since(set)
	io.WriteString(w, "/quit\n")
	w.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "⚙ scheduler__schedule done") || !strings.Contains(out.String(), "[An answer kept for link:chat while nobody waited:]\nTime to call the bank!") {
		t.Fatalf("the chat showed %q", out.String())
	}
	if shown > 2*time.Second+keptEvery+3*time.Second {
		t.Errorf("the reminder's answer was shown %v after it was set, for one set 2 s ahead", shown)
	}
	p, _ := store.For(home, "main")
	events, err := log.Open(p.Chats()).Read(context.Background(), "link:chat", 1)
	if err != nil {
		t.Fatal(err)
	}
	var reminders []store.Event
	for _, e := range events {
		if e.Kind == store.KindMessage && strings.HasPrefix(e.From, "schedule:") {
			reminders = append(reminders, e)
		}
	}
	if len(reminders) != 1 || reminders[0].Text != "Remind the owner to call the bank" || reminders[0].Hops != 1 || reminders[0].MessageID == "" {
		t.Fatalf("reminders stored: %+v", reminders)
	}
	if reqs := fake.Requests(); len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3", len(reqs))
	}
}

// waitFor waits until out holds want, failing after limit.
func waitFor(t *testing.T, out *safeBuffer, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v in vain for %q; the chat showed %q", limit, want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
