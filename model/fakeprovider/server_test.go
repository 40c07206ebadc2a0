package fakeprovider

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// With nothing scripted, every format echoes the last user text, labelled.
func TestDefaultEcho(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		path, header, body string
		text               func(map[string]any) any
	}{
		{"/v1/messages", "x-api-key", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"one"}]}`,
			func(m map[string]any) any { return path(m, "content", 0, "text") }},
		{"/v1/chat/completions", "Authorization", `{"model":"m","messages":[{"role":"user","content":"one"}]}`,
			func(m map[string]any) any { return path(m, "choices", 0, "message", "content") }},
		{"/v1/responses", "Authorization", `{"model":"m","input":"one"}`,
			func(m map[string]any) any { return path(m, "output", 0, "content", 0, "text") }},
		{"/v1beta/models/g:generateContent", "x-goog-api-key", `{"contents":[{"parts":[{"text":"one"}]}]}`,
			func(m map[string]any) any { return path(m, "candidates", 0, "content", "parts", 0, "text") }},
		{"/api/chat", "", `{"model":"m","stream":false,"messages":[{"role":"user","content":"one"}]}`,
			func(m map[string]any) any { return path(m, "message", "content") }},
	} {
		h := map[string]string{}
		if tc.header == "Authorization" {
			h[tc.header] = "Bearer k"
		} else if tc.header != "" {
			h[tc.header] = "k"
		}
		m := readJSON(t, post(t, s.URL()+tc.path, h, tc.body), 200)
		if got := tc.text(m); got != EchoPrefix+"one" {
			t.Errorf("%s answered %v, want the echo", tc.path, got)
		}
	}
	resp := post(t, s.URL()+"/v2/nothing", nil, `{}`)
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if got := s.Requests(); len(got) != 6 || got[5].Path != "/v2/nothing" || got[0].Body == nil {
		t.Errorf("recorded %d requests: %+v", len(got), got)
	}
}

// A hung answer is held until its client goes, and Close ends one still
// held without waiting for its client.
func TestHangAndClose(t *testing.T) {
	s := New()
	s.Script(Turn{Hang: true}, Turn{Hang: true})
	body := `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}`

	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("hung stream status %d", resp.StatusCode)
	}
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); read <- err }()
	select {
	case err := <-read:
		t.Fatalf("hung answer ended by itself: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	cancel()
	if err := <-read; err == nil {
		t.Fatal("read of a cancelled hung answer didn't fail")
	}
	resp.Body.Close()

	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(strings.Replace(body, `"stream":true`, `"stream":false`, 1)))
		req.Header.Set("x-api-key", "k")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	testwait.For(t, 5*time.Second, "the second request to reach the fake", func() bool { return len(s.Requests()) >= 2 })
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits on a hung answer")
	}
}

// Delay paces a stream's chunks; each arrives as it is sent.
func TestDelayStreams(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "one two three", Delay: 15 * time.Millisecond})
	start := time.Now()
	resp := post(t, s.URL()+"/api/chat", nil, `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	sc := bufio.NewScanner(resp.Body)
	var at []time.Duration
	for sc.Scan() {
		at = append(at, time.Since(start))
	}
	if len(at) != 4 {
		t.Fatalf("%d lines", len(at))
	}
	if at[3] < 60*time.Millisecond || at[0] > at[3]-30*time.Millisecond {
		t.Errorf("lines arrived at %v: not paced by 15ms each", at)
	}
}

// Requests may come at once; each takes its own turn, none twice.
func TestConcurrentTurns(t *testing.T) {
	s := newServer(t)
	const n = 8
	for i := range n {
		s.Script(Turn{Text: strings.Repeat("x", i+1)})
	}
	var wg sync.WaitGroup
	got := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp := post(t, s.URL()+"/v1/chat/completions", map[string]string{"Authorization": "Bearer k"}, `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
			b, _ := io.ReadAll(resp.Body)
			got <- string(b)
		})
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for b := range got {
		for i := n; i >= 1; i-- {
			if strings.Contains(b, `"content":"`+strings.Repeat("x", i)+`"`) {
				seen[i] = true
				break
			}
		}
	}
	if len(seen) != n || s.Pending() != 0 {
		t.Errorf("turns given: %v, %d pending", seen, s.Pending())
	}
}

func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "127.0.0.1:0", out) }()
	var url string
	testwait.For(t, 5*time.Second, "Run to say its address", func() bool {
		line, _, ok := strings.Cut(out.String(), "\n")
		url = strings.TrimPrefix(line, "fake provider at ")
		return ok
	})
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(out.String(), "OPENAI_BASE_URL="+url+"/v1") {
		t.Fatalf("Run said %q", out.String())
	}
	m := readJSON(t, post(t, url+"/v1/messages", map[string]string{"x-api-key": "k"}, `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`), 200)
	if path(m, "content", 0, "text") != EchoPrefix+"hi" {
		t.Errorf("standalone answer %v", m)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run didn't end with its context")
	}
	if _, err := Listen("256.0.0.1:0"); err == nil {
		t.Error("Listen on a bad address succeeded")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
