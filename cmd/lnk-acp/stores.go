package main

import (
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/hub/claudecode"
	"github.com/lnk-dev/link/hub/codex"
	"github.com/lnk-dev/link/hub/gemini"
)

// presetStore is the adapter store (hub.Config.Store) of preset's
// harness, reading and writing its own session files as env (the
// harness's environment) places them, for its sessions run in dir; nil
// for a preset whose files no store reads (the hub then answers agent
// state by replay alone).
func presetStore(preset string, env map[string]string, dir string) (hub.Store, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	switch preset {
	case "claude":
		config, err := claudecode.ConfigDir(env)
		if err != nil {
			return nil, err
		}
		return &claudecode.Store{ConfigDir: config, Cwd: dir}, nil
	case "codex":
		home, err := codex.Home(env)
		if err != nil {
			return nil, err
		}
		return &codex.Store{Home: home, Cwd: dir}, nil
	case "gemini":
		folder, err := gemini.Dir(env)
		if err != nil {
			return nil, err
		}
		return &gemini.Store{Dir: folder, Cwd: dir}, nil
	}
	return nil, nil
}

// presetSettings writes Link's tools into preset's harness's own
// settings (hub.Config.ToolSettings), for one that takes no MCP server
// over HTTP, as env (the harness's environment) places them; nil for a
// preset whose settings none writes.
func presetSettings(preset string, env map[string]string) hub.ToolSettings {
	switch preset {
	case "claude":
		return claudecode.Settings{Env: env}
	case "codex":
		return codex.Settings{Env: env}
	case "gemini":
		return gemini.Settings{Env: env}
	}
	return nil
}
