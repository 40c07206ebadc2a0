package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// The program offers the agent the MCP tools its environment names, and
// calls them: a model on a fake Anthropic calls web__fetch, served by a
// real MCP server named by $LNK_TOOL_WEB, and answers with what it said.
func TestToolsFromEnvironment(t *testing.T) {
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	web.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the page"}}}, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return web }, nil))
	defer mcpSrv.Close()
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "web__fetch", Input: `{"url":"x"}`}}},
		fakeprovider.Turn{Text: "fetched"},
	)
	home := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LNK_TOOL_WEB": mcpSrv.URL, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	m := NewMain(&syncBuffer{}, &syncBuffer{}, env)
	if err := m.ParseFlags([]string{"serve", "--home", home, "--port", "0", "--key-file", keyFile, "--model", "anthropic/claude-test"}); err != nil {
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
	if got := say(t, m.URL(), "telegram:3", "fetch it"); got != "fetched" {
		t.Fatalf("answered %q", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !slices.Contains(reqs[0].Tools, "web__fetch") {
		t.Fatalf("the model was offered %v", reqs[0].Tools)
	}
	var result *store.Event
	for _, e := range readEvents(t, home, "telegram:3") {
		if e.Kind == store.KindToolResult {
			result = &e
		}
	}
	if result == nil || result.Text != "the page" || result.IsError {
		t.Fatalf("tool result %+v", result)
	}
	p, _ := store.For(home, "main")
	if _, err := os.Stat(p.ToolLists()); err != nil {
		t.Fatalf("no tool-lists.json: %v", err)
	}
}
