package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/stdioagent"
)

// jsonSettings writes Link's tools into the scripted agent's settings
// file, {"mcpServers": {NAME: {"url": URL}}}, as an adapter writes a
// harness's; fail, when set, is its refusal.
type jsonSettings struct {
	path   string
	fail   error
	writes int
}

func (s *jsonSettings) WriteTools(ctx context.Context, tools []Tool) (bool, error) {
	if s.fail != nil {
		return false, s.fail
	}
	s.writes++
	servers := map[string]map[string]string{}
	for _, t := range tools {
		servers[t.Name] = map[string]string{"url": t.URL}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	old, _ := os.ReadFile(s.path)
	if bytes.Equal(old, b) {
		return false, nil
	}
	return true, os.WriteFile(s.path, b, 0o600)
}

// logLines is a logger's text output, safe to write at once.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

var twoTools = []Tool{{Name: "memory", URL: "http://127.0.0.1:9/memory"}, {Name: "web", URL: "http://127.0.0.1:9/web"}}

// TestToolsWrittenIntoSettings: a harness that says it takes no MCP
// server over HTTP is given none in its sessions; the adapter's
// ToolSettings writes Link's tools into its own settings file, and the
// harness, which reads that file only as it starts, is started again
// once to read them: its session has them. /health is good. A hub
// started again, the file as it was, starts the harness once.
func TestToolsWrittenIntoSettings(t *testing.T) {
	state := t.TempDir()
	settings := &jsonSettings{path: filepath.Join(state, "settings.json")}
	r := newRig(t, []string{envCaps + "=resume", stdioagent.EnvSettings + "=" + settings.path}, func(c *Config) {
		c.Tools, c.ToolSettings = twoTools, settings
	})
	ctx := testCtx(t, 30*time.Second)
	want := "mcp: ; settings: memory=http://127.0.0.1:9/memory web=http://127.0.0.1:9/web"
	if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != want {
		t.Fatalf("the harness has %q, want %q", got, want)
	}
	if n := len(r.agentLog("initialize")); n != 2 {
		t.Errorf("the harness started %d times, want twice (once more to read its settings)", n)
	}
	if err := r.hub.Health(ctx); err != nil {
		t.Errorf("/health: %v", err)
	}
	r.restart()
	if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != want {
		t.Fatalf("after the hub's restart the harness has %q, want %q", got, want)
	}
	if n := len(r.agentLog("initialize")); n != 3 {
		t.Errorf("the harness started %d times in all, want 3: its settings unchanged, once after the hub's restart", n)
	}
	if settings.writes != 3 {
		t.Errorf("the settings were written %d times, want once at each of the harness's 3 starts", settings.writes)
	}
}

// TestToolsNotWrittenSaid: a harness that takes no MCP server over HTTP,
// whose adapter writes no settings of it or can't, answers without
// Link's tools, and /health says so, the adapter's reason with it; the
// log says it once, however many times /health is asked and the harness
// starts.
func TestToolsNotWrittenSaid(t *testing.T) {
	for _, c := range []struct {
		name     string
		settings ToolSettings
		reason   string
	}{
		{"no settings", nil, "its adapter writes no settings of it"},
		{"refused", &jsonSettings{fail: errors.New("its folder is the owner's own")}, "its folder is the owner's own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs logLines
			r := newRig(t, []string{envCaps + "=resume"}, func(cfg *Config) {
				cfg.Tools, cfg.ToolSettings = twoTools, c.settings
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			ctx := testCtx(t, 30*time.Second)
			if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != "mcp: " {
				t.Errorf("the harness was given %q, want none", got)
			}
			for range 3 {
				err := r.hub.Health(ctx)
				if err == nil || !strings.Contains(err.Error(), "takes no MCP server over HTTP") || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("/health: %v", err)
				}
			}
			r.message(ctx, "telegram:1", "crash", nil) // it starts again at the next message
			r.message(ctx, "telegram:1", "mcp", nil).must(t)
			if n := len(r.agentLog("initialize")); n != 2 {
				t.Errorf("the harness started %d times, want 2", n)
			}
			if n := logs.count("takes no MCP server over HTTP"); n != 1 {
				t.Errorf("the log says it %d times, want once:\n%s", n, logs.b.String())
			}
		})
	}
}

// TestToolsNotNeededNotSaid: a harness that takes MCP servers over HTTP,
// or a Link Harness (its sessions threads), needs no settings written:
// the ToolSettings is never asked, and /health is good.
func TestToolsNotNeededNotSaid(t *testing.T) {
	for _, caps := range []string{"resume,mcp", "threads"} {
		settings := &jsonSettings{fail: errors.New("asked")}
		r := newRig(t, []string{envCaps + "=" + caps}, func(cfg *Config) { cfg.Tools, cfg.ToolSettings = twoTools, settings })
		if err := r.hub.Health(testCtx(t, 30*time.Second)); err != nil {
			t.Errorf("%s: /health: %v", caps, err)
		}
	}
}
