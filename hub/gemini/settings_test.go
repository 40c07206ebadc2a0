package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/hub"
)

// TestSettings: Link's tools go into $GEMINI_CLI_HOME/.gemini/settings.json
// as mcpServers of httpUrl; with no folder of its own ($GEMINI_CLI_HOME
// unset, or $HOME), the owner's ~/.gemini is never written.
func TestSettings(t *testing.T) {
	home, own := t.TempDir(), t.TempDir()
	tools := []hub.Tool{{Name: "memory", URL: "http://127.0.0.1:9/m"}}
	for _, env := range []map[string]string{{"HOME": home}, {"HOME": home, "GEMINI_CLI_HOME": home}} {
		if _, err := (Settings{Env: env}).WriteTools(t.Context(), tools); err == nil || !strings.Contains(err.Error(), "$GEMINI_CLI_HOME") {
			t.Errorf("%v: %v", env, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini")); err == nil {
		t.Error("the owner's ~/.gemini written")
	}
	if changed, err := (Settings{Env: map[string]string{"HOME": home, "GEMINI_CLI_HOME": own}}).WriteTools(t.Context(), tools); !changed || err != nil {
		t.Fatalf("%v, %v", changed, err)
	}
	b, _ := os.ReadFile(filepath.Join(own, ".gemini", "settings.json"))
	var set struct {
		MCPServers map[string]map[string]string `json:"mcpServers"`
	}
	if json.Unmarshal(b, &set); set.MCPServers["memory"]["httpUrl"] != "http://127.0.0.1:9/m" {
		t.Fatalf("wrote %s", b)
	}
}
