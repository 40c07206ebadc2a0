package serve

import (
	"encoding/json"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

// TestHopsReachTool: a message's hops (_meta.link.hops, as a bridge sends
// them) go through the real endpoint and Link Harness to a real MCP tool
// server as its calls' link.local/hops, the number the message came with;
// the owner's message, which has none, is 0 there.
func TestHopsReachTool(t *testing.T) {
	web, url := newMetaRecorder(t)
	fetch := model.Response{Calls: []model.ToolCall{{ID: "c1", Name: "web__fetch", Input: `{}`}}}
	q := scripted.New(fetch, model.Response{Text: "read"}, fetch, model.Response{Text: "read"})
	key := []byte("serve-test-key-0123456789")
	s, err := Start(t.Context(), Config{
		Home: t.TempDir(), Key: key, Model: scripted.OfflineName,
		Env: map[string]string{"LNK_TOOL_WEB": url},
		Edit: func(c *harness.Config) {
			c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sayTo(t, s.URL(), key, "link:relayed", "fetch it", json.RawMessage(`{"link":{"from":"agent:helper","fromName":"Helper","hops":3}}`))
	sayTo(t, s.URL(), key, "link:owner", "fetch it", nil)
	web.mu.Lock()
	defer web.mu.Unlock()
	if len(web.metas) != 2 {
		t.Fatalf("%d calls reached web, want 2", len(web.metas))
	}
	for i, want := range []struct {
		thread string
		hops   float64
	}{{"link:relayed", 3}, {"link:owner", 0}} {
		m := web.metas[i]
		if m["link.local/thread"] != want.thread || m["link.local/hops"] != want.hops {
			t.Errorf("call %d's _meta %v: want link.local/thread %q and link.local/hops %v", i, m, want.thread, want.hops)
		}
	}
}
