package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// sendRun runs lnk agent chat send.
func sendRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errb safeBuffer
	code := runChatSend(ctx, args, env, &out, &errb)
	return code, out.String(), errb.String()
}

// From nothing but a home, send starts the agent itself and prints the
// offline model's answer.
func TestSendOffline(t *testing.T) {
	home := t.TempDir()
	code, out, errOut := sendRun(t, map[string]string{"LNK_HOME": home}, "--thread", "link:notes", "remember", "the milk")
	if code != 0 || !strings.HasPrefix(out, scripted.Label) || !strings.Contains(out, "remember the milk") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "offline scripted model") {
		t.Fatalf("didn't say it runs offline: %s", errOut)
	}
	if ev := readChat(t, home, "link:notes"); len(ev) != 2 || ev[0].Text != "remember the milk" {
		t.Fatalf("events %+v", ev)
	}
	for _, bad := range [][]string{{}, {"--thread", "slack:C1", "hi"}, {"--wait", "-1s", "hi"}} {
		if code, _, _ := sendRun(t, map[string]string{"LNK_HOME": home}, bad...); code != 2 {
			t.Errorf("%q: exit %d", bad, code)
		}
	}
}

// A message that joins a running turn is answered by that turn's answer,
// kept for it: send waits for it and prints it, never an answer kept
// before it was sent, and lets it go. One that waits past --wait says it
// has none yet.
func TestSendSteered(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	q := scripted.New(model.Response{Text: "first answer"}, model.Response{Text: "and the rest"})
	q.Before = func(ctx context.Context, _ model.Request) error {
		held := false
		once.Do(func() { held = true; close(reached) })
		if held {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	home := t.TempDir()
	url, keyFile := scriptedAgent(t, home, q, nil, nil)
	// Registered after the agent's cleanup, so it runs before it: a test
	// that fails early lets the held turn go before the agent is closed.
	var freed sync.Once
	free := func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free)
	p, _ := store.For(home, "main")
	f := &delivery.Answers{Paths: p}
	if _, err := f.KeepForChat(t.Context(), "link:s", "an old answer", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	args := func(more ...string) []string {
		return append([]string{"--endpoint", url, "--key-file", keyFile, "--home", home, "--thread", "link:s"}, more...)
	}
	type result struct {
		code     int
		out, err string
	}
	first := make(chan result, 1)
	go func() {
		code, out, errOut := sendRun(t, nil, args("start")...)
		first <- result{code, out, errOut}
	}()
	select {
	case <-reached:
	case r := <-first:
		t.Fatalf("the first send ended before its turn reached the model: exit %d, %q: %s", r.code, r.out, r.err)
	case <-time.After(40 * time.Second):
		t.Fatal("the first send's turn didn't reach the model within 40s")
	}
	code, out, errOut := sendRun(t, nil, args("--wait", "200ms", "too", "hasty")...)
	if code != 1 || out != "" || !strings.Contains(errOut, "joined the turn already running") || !strings.Contains(errOut, "no answer came within 200ms") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	second := make(chan result, 1)
	go func() {
		code, out, errOut := sendRun(t, nil, args("--wait", "20s", "also")...)
		second <- result{code, out, errOut}
	}()
	// Let the turn go on once the last message has joined it.
	testwait.For(t, 10*time.Second, "the message to join", func() bool { return strings.Contains(eventsText(t, home, "link:s"), "also") })
	free()
	r1 := receiveWithin(t, first, 40*time.Second, "the first send's answer")
	r2 := receiveWithin(t, second, 40*time.Second, "the steered send's answer")
	if r1.code != 0 || r1.out != "first answer\n\nand the rest\n" {
		t.Fatalf("first: exit %d, %q: %s", r1.code, r1.out, r1.err)
	}
	if r2.code != 0 || r2.out != r1.out {
		t.Fatalf("steered: exit %d, %q: %s", r2.code, r2.out, r2.err)
	}
	// Left: the old answer, and the one kept for the hasty message, whose
	// sender stopped waiting (lnk agent chat shows it).
	// Each is kept as the turn lets go; the one not taken may come last.
	var pending []delivery.Answer
	var err error
	_ = testwait.Err(10*time.Second, "two answers kept", func() bool { // the check below says what was kept
		pending, err = f.Pending(t.Context())
		return err != nil || len(pending) >= 2
	})
	if err != nil || len(pending) != 2 || pending[0].Text != "an old answer" || pending[1].Text != r1.out[:len(r1.out)-1] {
		t.Fatalf("pending %+v, %v", pending, err)
	}
}

// receiveWithin returns the value ch gives within d, or fails the test
// saying it waited for what.
func receiveWithin[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("waited %v for %s", d, what)
		panic("unreachable")
	}
}

// eventsText joins the text of thread's events.
func eventsText(t *testing.T, home, thread string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range readChat(t, home, thread) {
		b.WriteString(e.Text)
		b.WriteByte('\n')
	}
	return b.String()
}
