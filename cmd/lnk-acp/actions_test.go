package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestActionsAndTools: the chat namespace's /new reaches the agent as the
// name its session lists (/clear); a Link-owned action (--actions) runs
// through its route, a call of one of Link's tools on a real MCP server,
// and never reaches the agent; and Link's tools go to each session as
// mcpServers over HTTP.
func TestActionsAndTools(t *testing.T) {
	var got string
	task := mcp.NewServer(&mcp.Implementation{Name: "task", Version: "1"}, nil)
	task.AddTool(&mcp.Tool{Name: "list", Description: "list the tasks", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got = string(r.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no tasks"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return task }, nil))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "actions.toml")
	os.WriteFile(file, []byte("namespace = \"task\"\n[[actions]]\nname = \"list\"\ndescription = \"List the tasks\"\nroute = \"task__list\"\n"), 0o600)
	m, key := start(t, map[string]string{"LNK_TOOL_TASK": srv.URL, "LNK_MEMORY": "http://127.0.0.1:1/memory", stdioagent.EnvCaps: "mcp"}, "--actions", file)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if a := message(t, ctx, m.URL(), key, "telegram:1", "/new"); a != "echo: /clear" {
		t.Errorf("/new reached the agent as %q", a)
	}
	if a := message(t, ctx, m.URL(), key, "telegram:1", "/task:list open"); a != "no tasks" {
		t.Errorf("/task:list was answered %q, want its route's answer", a)
	}
	if got != `{"text":"open"}` {
		t.Errorf("the route was called with %s", got)
	}
	want := "mcp: memory=http://127.0.0.1:1/memory task=" + srv.URL
	if a := message(t, ctx, m.URL(), key, "telegram:1", "mcp"); a != want {
		t.Errorf("the session was given %q, want %q", a, want)
	}
	if a := message(t, ctx, m.URL(), key, "telegram:2", "mcp"); !strings.HasPrefix(a, "mcp: memory=") {
		t.Errorf("a second thread's session was given %q", a)
	}
}
