package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// noHTTP is command run so that its initialize answer says it takes no
// MCP server over HTTP (mcpCapabilities.http false), as an agent of an
// older version may: a pipeline through sed, in the process group the
// hub ends.
func noHTTP(command []string) []string {
	return append([]string{"sh", "-c", `"$@" | sed -u 's/"mcpCapabilities":{"http":true/"mcpCapabilities":{"http":false/'`, "sh"}, command...)
}

// ownFolder is, for each preset, the variable that gives its agent a
// folder of its own, and the settings file lnk-acp writes there.
var ownFolder = map[string]struct{ variable, file string }{
	"claude": {"CLAUDE_CONFIG_DIR", ".claude.json"},
	"codex":  {"CODEX_HOME", "config.toml"},
	"gemini": {"GEMINI_CLI_HOME", filepath.Join(".gemini", "settings.json")},
}

// probeServer is a real MCP server over Streamable HTTP with one call,
// lookup, counting its calls.
func probeServer(t *testing.T) (string, *atomic.Int32) {
	var calls atomic.Int32
	probe := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	probe.AddTool(&mcp.Tool{Name: "lookup", Description: "looks the word up", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "probe-result-7"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe }, nil))
	// Closed after lnk-acp (cleanups run last first): an agent holding
	// the server's event stream open would hold Close.
	t.Cleanup(srv.Close)
	return srv.URL, &calls
}

// offered is the name the model was last offered the probe's lookup by,
// "" for none.
func offered(fake *fakeprovider.Server) string {
	reqs := fake.Requests()
	if len(reqs) == 0 {
		return ""
	}
	for _, tool := range reqs[len(reqs)-1].Tools {
		if strings.Contains(tool, "lookup") {
			return tool
		}
	}
	return ""
}

// health is lnk-acp's /health: its status and its body.
func health(t *testing.T, acpURL string) (int, string) {
	t.Helper()
	u, err := url.Parse(acpURL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: contract.HealthPath}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestRealAgentsToolsInSettings: each real agent, made to say it takes no
// MCP server over HTTP, is given Link's tools in its own settings, in
// the folder its environment gives it (not its owner's, in $HOME, which
// is left alone), and calls one: its session/new had none. /health is
// good.
func TestRealAgentsToolsInSettings(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
			probe, calls := probeServer(t)
			fake := fakeprovider.New()
			defer fake.Close()
			home, work, own := t.TempDir(), t.TempDir(), t.TempDir()
			of := ownFolder[a.name]
			env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home, "LNK_TOOL_PROBE": probe, of.variable: own}
			for k, v := range a.env(fake.URL()) {
				env[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
			defer cancel()
			m, key := runReal(t, env, []string{"--dir", work, "--preset", a.name}, noHTTP(a.command(bin, fake.URL()))...)
			message(t, ctx, m.URL(), key, "telegram:1", "hello")
			b, err := os.ReadFile(filepath.Join(own, of.file))
			if err != nil || !strings.Contains(string(b), probe) {
				t.Fatalf("its settings %s hold %q (%v), without the probe's address", of.file, b, err)
			}
			name := offered(fake)
			if name == "" {
				t.Fatalf("the model was offered no tool of the probe: %q", fake.Requests()[len(fake.Requests())-1].Tools)
			}
			fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: name, Input: `{}`}}})
			message(t, ctx, m.URL(), key, "telegram:1", "look it up")
			if calls.Load() == 0 {
				t.Fatalf("the agent never called %s on the probe", name)
			}
			if code, body := health(t, m.URL()); code != http.StatusOK {
				t.Errorf("/health %d %s", code, body)
			}
			entries, _ := os.ReadDir(home)
			for _, e := range entries {
				if _, err := os.Stat(filepath.Join(home, e.Name(), filepath.Base(of.file))); err == nil && strings.HasPrefix(e.Name(), ".") {
					t.Errorf("a settings file was written in the owner's folder %s", e.Name())
				}
			}
		})
	}
}

// TestRealAgentToolsNotInOwnersSettings: a real agent that takes no MCP
// server over HTTP, with no folder of its own (its owner's, in $HOME),
// has nothing written there: it answers without Link's tools, and
// /health says so, naming the variable that would give it one.
func TestRealAgentToolsNotInOwnersSettings(t *testing.T) {
	a := realAgents[1] // codex, the quickest to start
	bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
	probe, _ := probeServer(t)
	fake := fakeprovider.New()
	defer fake.Close()
	home, work := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home, "LNK_TOOL_PROBE": probe}
	for k, v := range a.env(fake.URL()) {
		env[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	m, key := runReal(t, env, []string{"--dir", work, "--preset", a.name}, noHTTP(a.command(bin, fake.URL()))...)
	message(t, ctx, m.URL(), key, "telegram:1", "hello")
	if name := offered(fake); name != "" {
		t.Errorf("the model was offered %s", name)
	}
	code, body := health(t, m.URL())
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "takes no MCP server over HTTP") || !strings.Contains(body, "$CODEX_HOME") {
		t.Errorf("/health %d %q", code, body)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "config.toml")); err == nil {
		t.Errorf("config.toml written in the owner's ~/.codex")
	}
}
