package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// metaRecorder is a real MCP server of the go-sdk over Streamable HTTP on
// 127.0.0.1:0 with one call, fetch, recording each call's _meta.
type metaRecorder struct {
	mu    sync.Mutex
	metas []mcp.Meta
}

func newMetaRecorder(t *testing.T) (*metaRecorder, string) {
	t.Helper()
	r := &metaRecorder{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.mu.Lock()
			r.metas = append(r.metas, req.Params.Meta)
			r.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the page"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return r, ts.URL
}

// The spec's [tools] and [tool.web] tables in config.json reach the web
// tool's MCP server as link.local/spec, merged key by key, in a
// subagent's task (a message from others that gave the conversation its
// tools); the owner's own conversation's calls carry none.
func TestToolSpecReachesTool(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p.Config()), 0o700); err != nil {
		t.Fatal(err)
	}
	config := `{"tools":{"timeout":30,"proxy":"on"},"tool":{"web":{"timeout":5,"max_bytes":100},"memory":{"k":1}}}`
	if err := os.WriteFile(p.Config(), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	web, url := newMetaRecorder(t)
	fetch := model.Response{Calls: []model.ToolCall{{ID: "c1", Name: "web__fetch", Input: `{}`}}}
	q := scripted.New(fetch, model.Response{Text: "read"}, fetch, model.Response{Text: "read"})
	key := []byte("serve-test-key-0123456789")
	s, err := Start(t.Context(), Config{
		Home: home, Key: key, Model: scripted.OfflineName,
		Env: map[string]string{"LNK_TOOL_WEB": url},
		Edit: func(c *harness.Config) {
			c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sayTo(t, s.URL(), key, "link:owner", "fetch it", nil)
	sayTo(t, s.URL(), key, "link:task", "fetch it", json.RawMessage(`{"link":{"from":"task:t1","tools":["web__fetch"]}}`))
	web.mu.Lock()
	defer web.mu.Unlock()
	if len(web.metas) != 2 {
		t.Fatalf("%d calls reached web, want 2", len(web.metas))
	}
	if spec, ok := web.metas[0]["link.local/spec"]; ok {
		t.Errorf("the owner's call carried link.local/spec %v", spec)
	}
	got, _ := json.Marshal(web.metas[1]["link.local/spec"])
	if want := `{"max_bytes":100,"proxy":"on","timeout":5}`; string(got) != want {
		t.Errorf("the task's call carried link.local/spec %s, want %s", got, want)
	}
	if web.metas[1]["link.local/thread"] != "link:task" {
		t.Errorf("the task's call's _meta %v", web.metas[1])
	}
}

// A config.json whose tables aren't JSON objects is refused as it is
// read (each turn reads it, before its message is stored), saying which
// table.
func TestToolSpecRefused(t *testing.T) {
	p, _ := store.For(t.TempDir(), "main")
	os.MkdirAll(filepath.Dir(p.Config()), 0o700)
	if err := os.WriteFile(p.Config(), []byte(`{"tool":{"web":"fast"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSettings(t.Context(), p, "")
	if err == nil || err.Error() != `config.json: tool.web is a table of the spec, a JSON object, not a string` {
		t.Fatalf("%v", err)
	}
}
