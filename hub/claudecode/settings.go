package claudecode

import (
	"context"

	"github.com/lnk-dev/link/hub"
)

var _ hub.ToolSettings = Settings{}

// Settings writes Link's tools into Claude Code's own settings, for a
// Claude Code that takes no MCP server over HTTP in its sessions: each an
// entry of the mcpServers of $CLAUDE_CONFIG_DIR/.claude.json (its user
// scope), {"type": "http", "url": its address}, which each Claude Code
// process reads as it starts, one a session. A Claude Code without a
// folder of its own ($CLAUDE_CONFIG_DIR unset, or ~/.claude) has none
// written: that folder is its owner's own.
type Settings struct {
	// Env is Claude Code's environment.
	Env map[string]string
}

// WriteTools writes tools into .claude.json's mcpServers.
func (s Settings) WriteTools(ctx context.Context, tools []hub.Tool) (bool, error) {
	f, err := hub.OwnSettings(s.Env, "CLAUDE_CONFIG_DIR", ".claude", ".claude.json")
	if err != nil {
		return false, err
	}
	servers := map[string]any{}
	for _, t := range tools {
		servers[t.Name] = map[string]string{"type": "http", "url": t.URL}
	}
	return hub.WriteJSONServers(f, servers)
}
