package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestRealAgentModelPicker: a message's _meta.link.model reaches a real
// agent through its session's model picker (the config option of
// category model Codex and Claude offer, set with
// session/set_config_option): the fake provider is asked on that model,
// where the message before was asked on the agent's default, and after
// lnk-acp restarts the thread's session still runs on it.
func TestRealAgentModelPicker(t *testing.T) {
	for _, c := range []struct{ agent, model, want string }{
		{"codex", "gpt-5.4", "gpt-5.4"},
		{"claude", "haiku", "haiku"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			var a realAgent
			for _, r := range realAgents {
				if r.name == c.agent {
					a = r
				}
			}
			bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
			fake := fakeprovider.New()
			defer fake.Close()
			home, work := t.TempDir(), t.TempDir()
			env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home}
			for k, v := range a.env(fake.URL()) {
				env[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			flags := []string{"--preset", a.name, "--home", home, "--dir", work}
			m, key := runReal(t, env, flags, a.command(bin, fake.URL())...)
			metaMessage(t, ctx, m.URL(), key, "telegram:1", "first words", nil)
			if got := askedModel(t, fake, "first words"); strings.Contains(got, c.want) {
				t.Fatalf("asked on %q before any model was set", got)
			}
			metaMessage(t, ctx, m.URL(), key, "telegram:1", "second words", json.RawMessage(`{"link":{"model":"`+c.model+`"}}`))
			if got := askedModel(t, fake, "second words"); !strings.Contains(got, c.want) {
				t.Errorf("with _meta.link.model %s the provider was asked on %q", c.model, got)
			}
			m.Close()
			m, key = runReal(t, env, flags, a.command(bin, fake.URL())...)
			defer m.Close()
			metaMessage(t, ctx, m.URL(), key, "telegram:1", "third words", nil)
			if got := askedModel(t, fake, "third words"); !strings.Contains(got, c.want) {
				t.Errorf("after a restart the provider was asked on %q", got)
			}
		})
	}
}

// metaMessage sends one message with meta as its _meta, as a bridge does,
// failing t unless it is answered.
func metaMessage(t *testing.T, ctx context.Context, url string, key []byte, thread, text string, meta json.RawMessage) {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(ctx, f, nil)
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

// askedModel is the model of the last request the fake provider was sent
// holding text.
func askedModel(t *testing.T, fake *fakeprovider.Server, text string) string {
	t.Helper()
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !strings.Contains(string(reqs[i].Body), text) {
			continue
		}
		var b struct {
			Model string `json:"model"`
		}
		json.Unmarshal(reqs[i].Body, &b)
		return b.Model
	}
	t.Fatalf("the provider was sent no request holding %q (%d requests)", text, len(reqs))
	return ""
}
