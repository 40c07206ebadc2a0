package serve

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

func TestDefaultModel(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, scripted.OfflineName},
		{map[string]string{model.EnvAnthropicKey: "k", model.EnvOpenAIKey: "k"}, DefaultAnthropic},
		{map[string]string{model.EnvOpenAIKey: "k", model.EnvOllamaHost: "h"}, DefaultOpenAI},
		{map[string]string{model.EnvOpenRouterKey: "k"}, DefaultOpenRouter},
		{map[string]string{model.EnvOllamaHost: "127.0.0.1"}, DefaultOllama},
		{map[string]string{model.EnvAnthropicKey: ""}, scripted.OfflineName},
	} {
		p := DefaultModel(c.env)
		if p.Model != c.want || p.Offline() != (c.want == scripted.OfflineName) {
			t.Errorf("DefaultModel(%v) = %+v, want %s", c.env, p, c.want)
		}
		if p.Offline() {
			continue
		}
		// Each default is served by the provider its key set up.
		pr := NewProviders(c.env)
		r, err := pr.Route(p.Model)
		if err != nil || r.Provider == offlineRoute || (r.KeyEnv != "" && r.KeyEnv != p.Env) {
			t.Errorf("route of %s with %v: %+v, %v", p.Model, c.env, r, err)
		}
	}
}

// Start serves the harness at its endpoint on a free port: a message is
// answered by the offline model, and Close ends it.
func TestStart(t *testing.T) {
	key := []byte("serve-test-key-0123456789")
	s, err := Start(t.Context(), Config{Home: t.TempDir(), Key: key, Model: scripted.OfflineName})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("url %s", s.URL())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: s.URL(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got strings.Builder
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || u.Content == nil {
			return
		}
		mu.Lock()
		got.WriteString(u.Content.Text)
		mu.Unlock()
	})
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "link:test"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "link:test", []acp.Block{{Type: "text", Text: "hello"}}, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mu.Lock()
	text := got.String()
	mu.Unlock()
	if !strings.HasPrefix(text, scripted.Label) || !strings.Contains(text, "hello") {
		t.Fatalf("answered %q", text)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Served():
	default:
		t.Fatal("still serving after Close")
	}
}

// sayTo sends text to thread of the harness at url, on a connection of
// its own, and waits (20 s at most) for its answer.
func sayTo(t *testing.T, url string, key []byte, thread, text string, meta json.RawMessage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
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
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, meta); err != nil {
		t.Fatal(err)
	}
}

// $LNK_LEASE_TTL sets how soon a dead process's turn is taken over; one
// that isn't a duration is refused before anything listens.
func TestLeaseTTLFromEnv(t *testing.T) {
	key := []byte("serve-test-key-0123456789")
	for _, bad := range []string{"soon", "-1s"} {
		if s, err := Start(t.Context(), Config{Home: t.TempDir(), Key: key, Env: map[string]string{EnvLeaseTTL: bad}}); err == nil {
			s.Close()
			t.Errorf("accepted %q", bad)
		}
	}
	s, err := Start(t.Context(), Config{Home: t.TempDir(), Key: key, Env: map[string]string{EnvLeaseTTL: "2s"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
