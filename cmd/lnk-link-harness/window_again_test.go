package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// summaryHold is the fake provider behind a door that, once armed, holds
// the first request for a summary until released.
type summaryHold struct {
	fake    *fakeprovider.Server
	asked   chan struct{} // closed when the armed request came
	release chan struct{}

	mu    sync.Mutex
	armed bool
}

func (h *summaryHold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	hold := h.armed && bytes.Contains(body, []byte(summaryAsked))
	if hold {
		h.armed = false
	}
	h.mu.Unlock()
	if hold {
		close(h.asked)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.fake.ServeHTTP(w, r)
}

// sayFrom sends text in thread as a bridge does and gives the prompt's
// result.
func sayFrom(t *testing.T, url, thread, text string) acp.PromptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: []byte(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, thread); err != nil {
		t.Fatal(err)
	}
	res, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return res
}

// TestMessageWhileSummarizingElsewhere: two lnk-link-harness serve
// processes on one home. A message sent to the second while the first,
// its turn answered, summarizes under the conversation's lease is written
// by the second and joins that turn (steered); the first, letting its
// lease go once the summary is written, finds it and answers it in a turn
// of its own (window_after.go's again branch), the answer kept for
// _link/recover and handed over by either process, long before any
// sweep (a minute) would have answered it.
func TestMessageWhileSummarizingElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real program twice")
	}
	bin := buildHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	hold := &summaryHold{fake: fake, asked: make(chan struct{}), release: make(chan struct{})}
	door := httptest.NewServer(hold)
	defer door.Close()
	defer func() {
		select {
		case <-hold.release:
		default:
			close(hold.release)
		}
	}()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := childEnv(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": door.URL})
	home := windowHome(t)
	first := startProc(t, bin, home, keyFile, env)
	second := startProc(t, bin, home, keyFile, env)

	// How many turns until the first summary, in a thread of the same
	// length and the same messages.
	const trial, thread = "telegram:81", "telegram:82"
	for i := 1; asked(fake) == 0; i++ {
		if i > 40 {
			t.Fatal("no summary asked in 40 turns")
		}
		if o := bridgeSend(first.url, []byte(testKey), trial, windowText(i)); !o.responded {
			t.Fatalf("turn %d not answered", i)
		}
	}
	k := 0 // the turn after whose answer it was asked
	for _, e := range readEvents(t, home, trial) {
		if e.Kind == store.KindSummary {
			break
		}
		if e.Kind == store.KindMessage {
			k++
		}
	}

	for i := 1; i < k; i++ {
		if o := bridgeSend(first.url, []byte(testKey), thread, windowText(i)); !o.responded {
			t.Fatalf("turn %d not answered", i)
		}
	}
	hold.mu.Lock()
	hold.armed = true
	hold.mu.Unlock()
	if o := bridgeSend(first.url, []byte(testKey), thread, windowText(k)); !o.responded {
		t.Fatalf("turn %d not answered", k)
	}
	select {
	case <-hold.asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the summary after the answer was never asked")
	}
	const late = "written while the other summarizes"
	if res := sayFrom(t, second.url, thread, late); !res.Steered() {
		t.Fatalf("the second process answered %+v, not joined to the first's turn", res)
	}
	close(hold.release)

	// The first answers it after its summary; either hands it over.
	got := recovered{}
	for i, p := range []*harnessProc{second, first} {
		testwait.For(t, 20*time.Second, "the answer to the message written meanwhile", func() bool {
			got.collect(t, p.url, []byte(testKey), i == 1)
			return strings.Contains(got[thread][onlyID(got[thread])], late)
		})
	}
	events := readEvents(t, home, thread)
	var msg, summary, answer store.Event
	for _, e := range events {
		switch {
		case e.Kind == store.KindMessage && e.Text == late:
			msg = e
		case e.Kind == store.KindSummary:
			summary = e
		case e.Kind == store.KindAnswer && msg.Seq != 0 && strings.Contains(e.Text, late):
			answer = e
		}
	}
	if msg.Seq == 0 || !msg.Steered {
		t.Fatalf("the message kept as %+v", msg)
	}
	if summary.Seq == 0 || answer.Seq <= summary.Seq || answer.Seq <= msg.Seq {
		t.Fatalf("message %d, summary %d, its answer %d: not answered after the summary", msg.Seq, summary.Seq, answer.Seq)
	}
	if len(got[thread]) != 1 {
		t.Fatalf("handed over %v, want the one answer", got[thread])
	}
	first.stop(t)
	second.stop(t)
}

// onlyID is the id of answers' one answer, "" unless there is one.
func onlyID(answers map[string]string) string {
	if len(answers) != 1 {
		return ""
	}
	for id := range answers {
		return id
	}
	return ""
}
