package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRealAgentsTools: Link's tools reach a real agent as mcpServers over
// HTTP, and a call of one the fake provider scripts (by the name the
// agent offered it to the model under) reaches the MCP server. Claude
// alone for now: codex-acp 0.16.0, given the same mcpServers, offered its
// model no tool of them in its first request (not yet understood), and
// Gemini CLI was not yet run so.
func TestRealAgentsTools(t *testing.T) {
	dir := os.Getenv(EnvRealAgents)
	if dir == "" {
		t.Skip("$" + EnvRealAgents + " names no folder of the real agents (.ci/run installs them)")
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	for _, a := range realAgents {
		if a.name != "claude" {
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			var calls atomic.Int32
			probe := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
			probe.AddTool(&mcp.Tool{Name: "lookup", Description: "looks the word up", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					calls.Add(1)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "probe-result-7"}}}, nil
				})
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe }, nil))
			defer srv.Close()
			fake := fakeprovider.New()
			defer fake.Close()
			home, work := t.TempDir(), t.TempDir()
			env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home, "LNK_TOOL_PROBE": srv.URL}
			for k, v := range a.env(fake.URL()) {
				env[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
			defer cancel()
			m, key := runACP(t, env, []string{"--home", home, "--dir", work}, a.command(bin, fake.URL())...)
			message(t, ctx, m.URL(), key, "telegram:1", "hello")
			name := ""
			for _, r := range fake.Requests() {
				for _, tool := range r.Tools {
					if strings.Contains(tool, "lookup") {
						name = tool
					}
				}
			}
			if name == "" {
				t.Fatalf("the model was offered no tool of the probe's mcpServer")
			}
			fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: name, Input: `{}`}}})
			message(t, ctx, m.URL(), key, "telegram:1", "look it up")
			if calls.Load() == 0 {
				t.Fatalf("the agent never called %s on the probe", name)
			}
			t.Logf("%s called %s", a.name, name)
		})
	}
}
