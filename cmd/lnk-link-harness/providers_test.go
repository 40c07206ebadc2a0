package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
)

// The program reaches each provider the environment names: OpenAI's,
// OpenRouter's and Ollama's Chat Completions, as the fake provider speaks
// them, and Anthropic's Messages API.
func TestProviders(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	for _, tc := range []struct {
		model string
		env   map[string]string
		api   string
	}{
		{"openai/gpt-test", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.URL() + "/v1"}, "chat"},
		{"meta/llama-test", map[string]string{"OPENROUTER_API_KEY": "k", "OPENROUTER_BASE_URL": fake.URL() + "/v1"}, "chat"},
		{"ollama/qwen3:8b", map[string]string{"OLLAMA_HOST": fake.URL()}, "chat"},
		{"anthropic/claude-test", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}, "anthropic"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			fake.Script(fakeprovider.Turn{Text: "from " + tc.model})
			keyFile := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
				t.Fatal(err)
			}
			m := NewMain(&syncBuffer{}, &syncBuffer{}, tc.env)
			if err := m.ParseFlags([]string{"serve", "--home", t.TempDir(), "--port", "0", "--key-file", keyFile, "--model", tc.model}); err != nil {
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
			defer func() {
				m.Close()
				<-errc
			}()
			n := len(calls(fake))
			if got := say(t, m.URL(), "telegram:1", "hi"); got != "from "+tc.model {
				t.Fatalf("answered %q", got)
			}
			reqs := calls(fake)
			if len(reqs) != n+1 || reqs[n].API != tc.api {
				t.Fatalf("%d requests, the last to %q", len(reqs)-n, reqs[len(reqs)-1].API)
			}
		})
	}
}

// calls are the requests fake got that call a model: not Ollama's
// /api/show, by which the harness asks the window Ollama runs a model
// with.
func calls(fake *fakeprovider.Server) []fakeprovider.Request {
	var out []fakeprovider.Request
	for _, r := range fake.Requests() {
		if r.Path != "/api/show" {
			out = append(out, r)
		}
	}
	return out
}
