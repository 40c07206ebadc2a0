package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	prompts "github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/store"
)

// configFile is the agent's config.json as Link Harness reads it: the
// spec's tables as JSON. Only the keys the harness reads are here; others
// are let be.
//
//	{
//	  "id": "01HZX3K9QF",
//	  "model": {"name": "anthropic/claude-opus-5-5", "aliases": {"fast": "anthropic/claude-haiku-5"}, "answer": 8192},
//	  "storage": {"conversations": "compact"},
//	  "chat": {"verbose": true},
//	  "tools": {"timeout": 30},
//	  "tool": {"web": {"max_bytes": 1048576}},
//	  "instructions": {"base": "instructions/base.md", "notes": {"max": 4096}, "now": "none"},
//	  "connections": {"telegram": {}, "activity": true}
//	}
//
// tools is the spec's [tools] table, for every tool, and tool its
// [tool.<name>] tables, each over [tools] for its tool: what a call
// carries as link.local/spec. instructions is the spec's [instructions]:
// each section of the prompt by name, a file of the agent's (or "none")
// or {"file", "max", "depth"}. connections is the spec's [connections]:
// each table in it names a connection the agent is reached through.
type configFile struct {
	ID    string `json:"id"`
	Model struct {
		Name    string            `json:"name"`
		Aliases map[string]string `json:"aliases"`
		Answer  int               `json:"answer"`
	} `json:"model"`
	Storage struct {
		Conversations string `json:"conversations"`
	} `json:"storage"`
	Chat struct {
		Verbose *bool `json:"verbose"`
	} `json:"chat"`
	Tools        json.RawMessage            `json:"tools"`
	Tool         json.RawMessage            `json:"tool"`
	Instructions map[string]json.RawMessage `json:"instructions"`
	Connections  map[string]json.RawMessage `json:"connections"`
}

// maxConfig bounds config.json.
const maxConfig = 1 << 20

// ReadSettings reads the agent's settings from its config.json: a
// missing file is defaults. model, when not "", is --model's, and wins.
func ReadSettings(ctx context.Context, p store.Paths, model string) (harness.Settings, error) {
	s := harness.Settings{Model: model}
	b, err := os.ReadFile(p.Config())
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	return ParseSettings(b, model)
}

// ReadAgentID reads the agent's ID from its config.json's "id": "" when
// the file or the key is absent.
func ReadAgentID(p store.Paths) (string, error) {
	b, err := os.ReadFile(p.Config())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if len(b) > maxConfig {
		return "", fmt.Errorf("config.json is over %d bytes", maxConfig)
	}
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("config.json: %w", err)
	}
	if c.ID == "" {
		return "", nil
	}
	if err := contract.CheckAgentID(c.ID); err != nil {
		return "", fmt.Errorf("config.json: id: %w", err)
	}
	return c.ID, nil
}

// ParseSettings reads config.json's bytes.
func ParseSettings(b []byte, model string) (harness.Settings, error) {
	if len(b) > maxConfig {
		return harness.Settings{}, fmt.Errorf("config.json is over %d bytes", maxConfig)
	}
	var c configFile
	if err := json.Unmarshal(b, &c); err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	if c.ID != "" {
		if err := contract.CheckAgentID(c.ID); err != nil {
			return harness.Settings{}, fmt.Errorf("config.json: id: %w", err)
		}
	}
	if c.Storage.Conversations != "" {
		if err := store.ParseKind(c.Storage.Conversations); err != nil {
			return harness.Settings{}, fmt.Errorf("config.json: storage: %w", err)
		}
	}
	if c.Model.Answer < 0 {
		return harness.Settings{}, fmt.Errorf("config.json: model.answer %d is negative", c.Model.Answer)
	}
	tools, each, err := toolSpecs(c.Tools, c.Tool)
	if err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	instructions, err := instructionSettings(c.Instructions)
	if err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	s := harness.Settings{
		Instructions:  instructions,
		Connections:   connections(c.Connections),
		Model:         c.Model.Name,
		Aliases:       c.Model.Aliases,
		Conversations: c.Storage.Conversations,
		Verbose:       c.Chat.Verbose,
		MaxTokens:     c.Model.Answer,
		ToolsSpec:     tools,
		ToolSpecs:     each,
	}
	if model != "" {
		s.Model = model
	}
	return s, nil
}

// instructionSettings reads the [instructions] table: each section a file
// named (or "none"), or its {"file", "max", "depth"}.
func instructionSettings(table map[string]json.RawMessage) (prompts.Settings, error) {
	if len(table) == 0 {
		return nil, nil
	}
	out := make(prompts.Settings, len(table))
	for name, raw := range table {
		var src prompts.Source
		var file string
		if err := json.Unmarshal(raw, &file); err == nil {
			src.File = file
		} else {
			var t struct {
				File  string `json:"file"`
				Max   int    `json:"max"`
				Depth int    `json:"depth"`
			}
			d := json.NewDecoder(bytes.NewReader(raw))
			d.DisallowUnknownFields()
			if err := d.Decode(&t); err != nil {
				return nil, fmt.Errorf("instructions: %s: a file's name, \"none\" or {\"file\", \"max\", \"depth\"}: %v", name, err)
			}
			src = prompts.Source{File: t.File, Max: t.Max, Depth: t.Depth}
		}
		out[name] = src
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// connections is the connections [connections] names: each key whose
// value is a table, sorted.
func connections(table map[string]json.RawMessage) []string {
	var out []string
	for name, raw := range table {
		if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '{' {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
