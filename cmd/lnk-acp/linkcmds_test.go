package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestLinkHarnessCommandsListed: behind the hub, Link Harness's own
// commands (/model:set), which it lists as the hub takes its thread up,
// reach the bridge: the next connection resuming the thread is told
// them before its prompt is answered, as for any harness. The hub looked
// the thread's session up in its file, which keeps none for a harness
// whose sessions are the threads, so a bridge was never told them.
func TestLinkHarnessCommandsListed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lnk-link-harness")
	}
	bin := buildLinkHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "PATH": os.Getenv("PATH")}
	m, key := startCommand(t, env, bin, "serve", "--stdio", "--home", t.TempDir(), "--model", "anthropic/claude-test")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	message(t, ctx, m.URL(), key, "telegram:1", "hello")

	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: m.URL(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var listed []string
	c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
		var p struct {
			Update struct {
				Kind     string `json:"sessionUpdate"`
				Commands []struct {
					Name string `json:"name"`
				} `json:"availableCommands"`
			} `json:"update"`
		}
		json.Unmarshal(params, &p)
		if p.Update.Kind == acp.UpdateAvailableCommands {
			mu.Lock()
			for _, c := range p.Update.Commands {
				listed = append(listed, c.Name)
			}
			mu.Unlock()
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "telegram:1", []acp.Block{{Type: "text", Text: "again"}}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(" "+strings.Join(listed, " ")+" ", " model:set ") {
		t.Errorf("the bridge was listed %q, want Link Harness's model:set among them", listed)
	}
}

// TestLinkHarnessModelBehindHub: behind the hub, Link Harness, which
// offers editors a model picker, is sent no session/set_config_option
// for a message's _meta.link.model: it reads the model there itself (its
// sessions are threads), and the provider is asked on it.
func TestLinkHarnessModelBehindHub(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lnk-link-harness")
	}
	bin := buildLinkHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	wire := t.TempDir()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "PATH": os.Getenv("PATH")}
	m, key := startCommand(t, env, tapped(wire, []string{bin, "serve", "--stdio", "--home", t.TempDir(), "--model", "anthropic/claude-test"})...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	messageMeta(t, ctx, m.URL(), key, "telegram:1", "on another model", json.RawMessage(`{"link":{"model":"anthropic/claude-other"}}`))
	if got := askedModel(t, fake, "on another model"); got != "claude-other" {
		t.Errorf("the provider was asked on %q, want claude-other", got)
	}
	for _, w := range wireLines(t, filepath.Join(wire, "in.jsonl")) {
		if w.Method == acp.MethodSetConfigOption {
			t.Errorf("Link Harness behind the hub was sent %s", w.Method)
		}
	}
}
