package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// proofTurns is how long the scripted conversation of TestWindowProof
// runs, and proofWindow the window it runs over: small enough for the
// window to move on several times.
const (
	proofTurns  = 300
	proofWindow = 24000
)

// converse runs the real program against the fake provider in format
// (anthropic or chat), its agent's config.json setting [window] max to
// proofWindow and compact_at to compactAt, and says turns messages in one
// conversation, each about 100 tokens with its answer. It returns the
// model's requests, in order, and the conversation's events.
func converse(t *testing.T, format, compactAt string, turns int) ([]fakeprovider.Request, []store.Event) {
	t.Helper()
	fake := fakeprovider.New()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	name := "anthropic/claude-proof"
	if format == "chat" {
		env = map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.URL() + "/v1"}
		name = "openai/gpt-proof"
	}
	home := t.TempDir()
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"model":{"name":%q},"window":{"max":%d,"compact_at":%s}}`, name, proofWindow, compactAt)
	if err := os.WriteFile(p.Config(), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain(&syncBuffer{}, &syncBuffer{}, env)
	if err := m.ParseFlags([]string{"serve", "--home", home, "--port", "0", "--key-file", keyFile}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.Run(context.Background()) }()
	select {
	case <-m.Ready():
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	const thread = "telegram:300"
	for i := range turns {
		text := fmt.Sprintf("Message %d: %s", i, strings.Repeat("tell me more about the garden ", 5))
		if got := say(t, m.URL(), thread, text); !strings.Contains(got, fmt.Sprintf("Message %d:", i)) {
			t.Fatalf("turn %d answered %q", i, got)
		}
	}
	m.Close() // waits for a summary after the last answer
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	var reqs []fakeprovider.Request
	for _, r := range fake.Requests() {
		if r.API == format {
			reqs = append(reqs, r)
		}
	}
	return reqs, readEvents(t, home, thread)
}

// asks says whether r asks for a summary: its last message is the
// harness's request for one.
func asks(p fakeprovider.Prompt) bool {
	n := len(p.Messages)
	return n > 0 && bytes.Contains(p.Messages[n-1], []byte("[Link Harness: the start of this conversation is leaving your window."))
}

// TestWindowProof: a conversation of 300 turns over a small window,
// through the real program and the fake provider, in Anthropic's and the
// Chat Completions format. The system prompt is the same bytes every
// request; between drop points each request's messages are a
// byte-identical prefix of the next's; at each drop point the window
// starts with a summary written just before it; the summaries cover the
// conversation from its first event to the window's start; every event
// is kept. It prints the share of the requests' bytes a provider's cache
// could have kept, with compaction and (Anthropic's) without.
func TestWindowProof(t *testing.T) {
	if testing.Short() {
		t.Skip("300 turns")
	}
	for _, tc := range []struct {
		format, compactAt string
	}{{"anthropic", "0.75"}, {"chat", "0.75"}, {"anthropic", `"never"`}} {
		t.Run(tc.format+"-"+strings.Trim(tc.compactAt, `"`), func(t *testing.T) {
			reqs, events := converse(t, tc.format, tc.compactAt, proofTurns)
			never := tc.compactAt == `"never"`
			var prompts []fakeprovider.Prompt
			for _, r := range reqs {
				p, ok := PromptOf(t, r)
				if ok {
					prompts = append(prompts, p)
				}
			}
			summaries := 0
			for _, e := range events {
				if e.Kind == store.KindSummary {
					summaries++
				}
			}
			drops, ask := 0, 0
			for i := 1; i < len(prompts); i++ {
				a, b := prompts[i-1], prompts[i]
				if !bytes.Equal(a.System, b.System) || !bytes.Equal(a.Tools, b.Tools) {
					t.Fatalf("request %d: the system prompt or tools changed", i)
				}
				if asks(b) {
					ask++
				}
				if isPrefix(a.Messages, b.Messages) {
					continue
				}
				drops++
				first := string(b.Messages[0])
				switch {
				case never && strings.Contains(first, window.SummaryHead[:20]):
					t.Fatalf("request %d: a summary with compact_at never", i)
				case never && !strings.Contains(first, "Message "):
					t.Fatalf("request %d starts with %.120s", i, first)
				case !never && (!asks(a) || !strings.Contains(first, strings.TrimSuffix(strings.ReplaceAll(window.SummaryHead, "\n", `\n`), `\n`))):
					t.Fatalf("request %d moves the window without a summary asked just before it: %.200s", i, first)
				}
			}
			if drops < 2 {
				t.Fatalf("the window moved %d times in %d turns", drops, proofTurns)
			}
			if !never && (summaries != drops || ask != drops) {
				t.Fatalf("%d drop points, %d summaries asked, %d written", drops, ask, summaries)
			}
			// Nothing lost: every message and answer kept, and the window the
			// last answer was made with starts where the last summary ends.
			msgs, answers := 0, 0
			var lastSum, lastAns store.Event
			for _, e := range events {
				switch e.Kind {
				case store.KindMessage:
					msgs++
				case store.KindAnswer:
					answers++
					lastAns = e
				case store.KindSummary:
					lastSum = e
					if e.Covers.From != 1 || e.Covers.To+1 != e.Window.Start {
						t.Fatalf("summary %d covers %+v, the window then starts at %d", e.Seq, *e.Covers, e.Window.Start)
					}
				}
			}
			if msgs != proofTurns || answers != proofTurns {
				t.Fatalf("%d messages and %d answers kept of %d turns", msgs, answers, proofTurns)
			}
			if !never && (lastAns.Window == nil || lastSum.Seq > lastAns.Seq && lastSum.Covers.To+1 < lastAns.Window.Start) {
				t.Fatalf("the last answer's window %+v, the last summary %+v", lastAns.Window, lastSum.Covers)
			}
			if !never && lastSum.Seq < lastAns.Seq && lastAns.Window.Start != lastSum.Window.Start {
				t.Fatalf("the last answer's window starts at %d, not after the last summary (%d)", lastAns.Window.Start, lastSum.Window.Start)
			}
			prefix, total := fakeprovider.CachedPrefix(reqs)
			share := float64(prefix) / float64(total)
			t.Logf("%s, compact_at %s: %d requests, %d drop points, %d summaries", tc.format, tc.compactAt, len(prompts), drops, summaries)
			t.Logf("cached prefix share: %.3f", share)
			if !never && share < 0.97 {
				t.Errorf("cached prefix share %.3f, under 0.97", share)
			}
		})
	}
}

// PromptOf is fakeprovider.PromptOf, failing t on a request that isn't
// a model's call.
func PromptOf(t *testing.T, r fakeprovider.Request) (fakeprovider.Prompt, bool) {
	p, ok := fakeprovider.PromptOf(r)
	if !ok && r.Path != "/v1/models" {
		t.Fatalf("a request to %s isn't a call", r.Path)
	}
	return p, ok
}

// isPrefix says whether a's messages are the first of b's, byte for byte.
func isPrefix(a, b [][]byte) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
