package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lnk-dev/link/cmd/internal/agentspec"
	"github.com/lnk-dev/link/harness/mcptools"
	"github.com/lnk-dev/link/internal/fsx"
)

// keptToolsFile is where lnk-acp configure keeps Link's tools for serve,
// in the agent's hub folder beside its sessions: the variables that name
// them ($LNK_MEMORY, $LNK_TOOL_<NAME>...), as a JSON object.
func keptToolsFile(folder string) string { return filepath.Join(folder, "hub", "link-tools.json") }

// agentFolder is the agent's folder under the Link home, where its spec,
// config.json and hub folder are.
func agentFolder(home, agent string) (string, error) {
	abs, err := filepath.Abs(home)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, "agents", agent), nil
}

// configure is lnk-acp configure: the agent's spec written as its
// config.json (which Link's tools read: [run], [scheduler], [tool.<name>];
// the harness behind the hub keeps its own settings), its keys and types
// checked, and Link's tools its environment names kept for serve, which
// hands them to the hub (the spec's Tools::keep).
func configure(env map[string]string) agentspec.Program {
	return agentspec.Program{
		Name:   "lnk-acp",
		Folder: agentFolder,
		Keep: func(folder string) (string, error) {
			vars := mcptools.ToolVars(env)
			b, err := json.MarshalIndent(vars, "", "  ")
			if err != nil {
				return "", err
			}
			path := keptToolsFile(folder)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return "", err
			}
			// 0600, as fsx.Replace makes it: each address holds its
			// tool's secret.
			if err := fsx.Replace(path, append(b, '\n'), true); err != nil {
				return "", fmt.Errorf("keep Link's tools: %w", err)
			}
			var names []string
			for _, s := range mcptools.Servers(vars) {
				names = append(names, s.Name)
			}
			if len(names) == 0 {
				return fmt.Sprintf("kept no tools in %s: the environment names none ($LNK_MEMORY, $LNK_TOOL_<NAME>...)", path), nil
			}
			return fmt.Sprintf("kept Link's tools for serve in %s: %s", path, strings.Join(names, ", ")), nil
		},
	}
}

// withKeptTools is env with the tools lnk-acp configure kept for the
// agent whose folder it is: a variable env sets itself wins. No file
// kept is env as it is.
func withKeptTools(env map[string]string, folder string) (map[string]string, error) {
	path := keptToolsFile(folder)
	b, err := fsx.ReadLimit(path, agentspec.MaxSpec)
	if err != nil {
		return nil, fmt.Errorf("Link's tools kept by lnk-acp configure: %w", err)
	}
	if b == nil {
		return env, nil
	}
	var kept map[string]string
	if err := json.Unmarshal(b, &kept); err != nil {
		return nil, fmt.Errorf("%s: not the tools lnk-acp configure keeps (%v): run it again", path, err)
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(mcptools.ToolVars(kept))) {
		if strings.ContainsRune(kept[k], 0) {
			return nil, fmt.Errorf("%s: %s holds a NUL: run lnk-acp configure again", path, k)
		}
		if _, set := out[k]; !set {
			out[k] = kept[k]
		}
	}
	return out, nil
}
