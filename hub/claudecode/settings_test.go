package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/hub"
)

// TestSettings: Link's tools go into $CLAUDE_CONFIG_DIR/.claude.json as
// mcpServers of type http; with no folder of its own
// ($CLAUDE_CONFIG_DIR unset, or ~/.claude), the owner's is never
// written.
func TestSettings(t *testing.T) {
	home, own := t.TempDir(), t.TempDir()
	tools := []hub.Tool{{Name: "memory", URL: "http://127.0.0.1:9/m"}}
	for _, env := range []map[string]string{{"HOME": home}, {"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}} {
		if _, err := (Settings{Env: env}).WriteTools(t.Context(), tools); err == nil || !strings.Contains(err.Error(), "$CLAUDE_CONFIG_DIR") {
			t.Errorf("%v: %v", env, err)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("the owner's home written: %v", entries)
	}
	if changed, err := (Settings{Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": own}}).WriteTools(t.Context(), tools); !changed || err != nil {
		t.Fatalf("%v, %v", changed, err)
	}
	b, _ := os.ReadFile(filepath.Join(own, ".claude.json"))
	var set struct {
		MCPServers map[string]map[string]string `json:"mcpServers"`
	}
	if json.Unmarshal(b, &set); set.MCPServers["memory"]["type"] != "http" || set.MCPServers["memory"]["url"] != "http://127.0.0.1:9/m" {
		t.Fatalf("wrote %s", b)
	}
}
