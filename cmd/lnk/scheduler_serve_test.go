package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
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
	if err := testwait.Err(limit, strconv.Quote(want), func() bool { return strings.Contains(out.String(), want) }); err != nil {
		t.Fatalf("%v; the chat showed %q", err, out.String())
	}
}

// lnk scheduler serve prints the address $LNK_SCHEDULER is set to, whose
// secret it keeps 0600 in the agent's scheduler/ (0700) and answers at
// again when started again on the same port; a 404 elsewhere; it refuses
// to start without the agent's endpoint key, and --agents with
// --endpoint (TestSchedulerServe).
func TestSchedulerServe(t *testing.T) {
	home := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	laddr := fmt.Sprintf("127.0.0.1:%d", port)
	url, stop := serveRun(t, "scheduler", "serve", "--home", home, "--listen", laddr, "--endpoint", "http://127.0.0.1:1/acp", "--key-file", keyFile)
	if got := answers(t, url); got != http.StatusOK {
		t.Fatalf("initialize at its address: %d", got)
	}
	if got := answers(t, "http://"+laddr+"/mcp/other"); got != http.StatusNotFound {
		t.Fatalf("initialize at another path: %d", got)
	}
	stop()
	p, _ := store.For(home, "main")
	for path, want := range map[string]os.FileMode{filepath.Join(p.Root, "scheduler"): 0o700, p.ToolSecret("scheduler"): 0o600} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Fatalf("%s: %v, want %v", path, info, want)
		}
	}
	again, stop := serveRun(t, "scheduler", "serve", "--home", home, "--listen", laddr, "--endpoint", "http://127.0.0.1:1/acp", "--key-file", keyFile)
	stop()
	if again != url {
		t.Fatalf("started again at %s, not %s", again, url)
	}
	var out, errb safeBuffer
	if code := NewMain(&out, &errb, map[string]string{}).Run(t.Context(), []string{"scheduler", "serve", "--home", home, "--key-file", filepath.Join(home, "none")}); code == 0 || !strings.Contains(errb.String(), "key") {
		t.Fatalf("without a key: exit %d: %s", code, errb.String())
	}
	errb = safeBuffer{}
	if code := NewMain(&out, &errb, map[string]string{}).Run(t.Context(), []string{"scheduler", "serve", "--home", home, "--agents", keyFile, "--endpoint", "http://127.0.0.1:1/acp"}); code == 0 || !strings.Contains(errb.String(), "--agents names the agent's endpoint") {
		t.Fatalf("--agents with --endpoint: exit %d: %s", code, errb.String())
	}
}
