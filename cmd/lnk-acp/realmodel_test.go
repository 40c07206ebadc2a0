package main

import (
	"context"
	"encoding/json"
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
			fake := fakeprovider.New()
			defer fake.Close()
			command, env, flags := realRun(t, a, fake.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			m, key := runReal(t, env, flags, command...)
			messageMeta(t, ctx, m.URL(), key, "telegram:1", "first words", nil)
			if got := askedModel(t, fake, "first words"); strings.Contains(got, c.want) {
				t.Fatalf("asked on %q before any model was set", got)
			}
			messageMeta(t, ctx, m.URL(), key, "telegram:1", "second words", json.RawMessage(`{"link":{"model":"`+c.model+`"}}`))
			if got := askedModel(t, fake, "second words"); !strings.Contains(got, c.want) {
				t.Errorf("with _meta.link.model %s the provider was asked on %q", c.model, got)
			}
			m.Close()
			m, key = runReal(t, env, flags, command...)
			defer m.Close()
			messageMeta(t, ctx, m.URL(), key, "telegram:1", "third words", nil)
			if got := askedModel(t, fake, "third words"); !strings.Contains(got, c.want) {
				t.Errorf("after a restart the provider was asked on %q", got)
			}
		})
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

// TestRealClaudeUsage: the usage_update real Claude sends at its turn's
// end (claude-agent-acp 0.23.1: the context used, its size, the cost)
// reaches the bridge through the hub as it came, under the thread's name,
// before the prompt's answer.
func TestRealClaudeUsage(t *testing.T) {
	var a realAgent
	for _, r := range realAgents {
		if r.name == "claude" {
			a = r
		}
	}
	fake := fakeprovider.New()
	defer fake.Close()
	command, env, flags := realRun(t, a, fake.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m, key := runReal(t, env, flags, command...)
	defer m.Close()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: m.URL(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var usage []json.RawMessage // read on the client's loop, before the answer
	c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
		var p struct {
			Update struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &p) == nil && p.Update.Kind == acp.UpdateUsage {
			usage = append(usage, params)
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "telegram:1", []acp.Block{{Type: "text", Text: "how much context?"}}, nil); err != nil {
		t.Fatal(err)
	}
	if len(usage) == 0 {
		t.Fatal("no usage_update reached the bridge")
	}
	var u struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			Used, Size int
			Cost       *struct {
				Currency string `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if err := json.Unmarshal(usage[len(usage)-1], &u); err != nil || u.SessionID != "telegram:1" || u.Update.Used <= 0 || u.Update.Size <= 0 || u.Update.Cost == nil || u.Update.Cost.Currency != "USD" {
		t.Errorf("usage_update reached the bridge as %s", usage[len(usage)-1])
	}
}
