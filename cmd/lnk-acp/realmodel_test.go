package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

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
