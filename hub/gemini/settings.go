package gemini

import (
	"context"
	"path/filepath"

	"github.com/lnk-dev/link/hub"
)

var _ hub.ToolSettings = Settings{}

// Settings writes Link's tools into Gemini CLI's own settings, for a
// Gemini CLI that takes no MCP server over HTTP in its sessions: each an
// entry of the mcpServers of $GEMINI_CLI_HOME/.gemini/settings.json,
// {"httpUrl": its address}, which Gemini CLI reads at each session/new.
// A Gemini CLI without a folder of its own ($GEMINI_CLI_HOME unset, or
// $HOME) has none written: that folder is its owner's own.
type Settings struct {
	// Env is Gemini CLI's environment.
	Env map[string]string
}

// WriteTools writes tools into settings.json's mcpServers.
func (s Settings) WriteTools(ctx context.Context, tools []hub.Tool) (bool, error) {
	f, err := hub.OwnSettings(s.Env, "GEMINI_CLI_HOME", "", filepath.Join(".gemini", "settings.json"))
	if err != nil {
		return false, err
	}
	servers := map[string]any{}
	for _, t := range tools {
		servers[t.Name] = map[string]string{"httpUrl": t.URL}
	}
	return hub.WriteJSONServers(f, servers)
}
