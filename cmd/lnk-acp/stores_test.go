package main

import (
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/hub/claudecode"
	"github.com/lnk-dev/link/hub/codex"
)

// TestPresetStore: --preset claude and codex read and write the agent's
// own files where the harness's environment places them, for the
// sessions run in --dir; gemini and no preset have no store.
func TestPresetStore(t *testing.T) {
	dir := t.TempDir()
	s, err := presetStore("claude", map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}, dir)
	if cs, ok := s.(*claudecode.Store); err != nil || !ok || cs.ConfigDir != filepath.Clean("/c") || cs.Cwd != dir {
		t.Errorf("claude: %#v, %v", s, err)
	}
	s, err = presetStore("claude", map[string]string{"HOME": "/h"}, dir)
	if cs, ok := s.(*claudecode.Store); err != nil || !ok || cs.ConfigDir != filepath.Join("/h", ".claude") {
		t.Errorf("claude with HOME alone: %#v, %v", s, err)
	}
	s, err = presetStore("codex", map[string]string{"HOME": "/h", "CODEX_HOME": "/x"}, dir)
	if cs, ok := s.(*codex.Store); err != nil || !ok || cs.Home != filepath.Clean("/x") || cs.Cwd != dir {
		t.Errorf("codex: %#v, %v", s, err)
	}
	for _, p := range []string{"gemini", ""} {
		if s, err := presetStore(p, map[string]string{"HOME": "/h"}, dir); s != nil || err != nil {
			t.Errorf("%q: %#v, %v", p, s, err)
		}
	}
}
