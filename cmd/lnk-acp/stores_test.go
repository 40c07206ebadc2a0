package main

import (
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/hub/claudecode"
	"github.com/lnk-dev/link/hub/codex"
	"github.com/lnk-dev/link/hub/gemini"
)

// TestPresetStore: --preset claude, codex and gemini read and write the agent's
// own files where the harness's environment places them, for the
// sessions run in --dir; no preset has no store.
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
	s, err = presetStore("gemini", map[string]string{"HOME": "/h"}, dir)
	if gs, ok := s.(*gemini.Store); err != nil || !ok || gs.Dir != filepath.Join("/h", ".gemini") || gs.Cwd != dir {
		t.Errorf("gemini: %#v, %v", s, err)
	}
	s, err = presetStore("gemini", map[string]string{"HOME": "/h", "GEMINI_CLI_HOME": "/g"}, dir)
	if gs, ok := s.(*gemini.Store); err != nil || !ok || gs.Dir != filepath.Join("/g", ".gemini") {
		t.Errorf("gemini with GEMINI_CLI_HOME: %#v, %v", s, err)
	}
	if s, err := presetStore("", map[string]string{"HOME": "/h"}, dir); s != nil || err != nil {
		t.Errorf("no preset: %#v, %v", s, err)
	}
}
