package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/lnk-dev/link/cmd/internal/agentspec"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	prompts "github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// configFile is the agent's config.json as Link Harness reads it: the
// spec's tables as JSON. Only the keys the harness reads are here; others
// are let be.
//
//	{
//	  "id": "01HZX3K9QF",
//	  "model": {"name": "anthropic/claude-opus-5-5", "aliases": {"fast": "anthropic/claude-haiku-5"}, "fallbacks": ["openai/gpt-6-luna"], "answer": 8192},
//	  "storage": {"conversations": "compact"},
//	  "chat": {"verbose": true},
//	  "tools": {"timeout": 30},
//	  "tool": {"web": {"max_bytes": 1048576}},
//	  "instructions": {"base": "instructions/base.md", "notes": {"max": 4096}, "now": "none"},
//	  "connections": {"telegram": {}, "activity": true},
//	  "window": {"max": 100000, "compact_at": 0.75, "save_notes": true}
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
		Name      string            `json:"name"`
		Aliases   map[string]string `json:"aliases"`
		Fallbacks []string          `json:"fallbacks"`
		Answer    int               `json:"answer"`
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
	Window       windowTable                `json:"window"`
}

// windowTable is the spec's [window]: how much of a conversation the
// model sees ("max", in tokens), when what leaves is summarized
// ("compact_at", a share of the room or "never"), whether notes are
// saved first ("save_notes"), the answer's and the margin's shares of the
// window ("answer", "margin") and an unknown model's window ("unknown").
// What it leaves out is Link's (window.Defaults).
type windowTable struct {
	Max       *int            `json:"max"`
	CompactAt json.RawMessage `json:"compact_at"`
	SaveNotes *bool           `json:"save_notes"`
	Answer    *float64        `json:"answer"`
	Margin    *float64        `json:"margin"`
	Unknown   *int            `json:"unknown"`
}

// settings reads the table over Link's defaults, refusing what breaks a
// rule by its name.
func (w windowTable) settings() (window.Settings, error) {
	s := window.Defaults()
	if w.Max != nil {
		if *w.Max < 1024 {
			return s, keyError("window.max", fmt.Errorf("window.max %d is under 1024 tokens", *w.Max))
		}
		s.Max, s.MaxSet = *w.Max, true
	}
	if len(w.CompactAt) > 0 {
		var never string
		var at float64
		switch {
		case json.Unmarshal(w.CompactAt, &never) == nil && never == "never":
			s.Never = true
		case json.Unmarshal(w.CompactAt, &at) == nil && at > 0 && at <= 1:
			s.CompactAt = at
		default:
			return s, keyError("window.compact_at", fmt.Errorf(`window.compact_at %s is neither a share of the room (above 0, at most 1) nor "never"`, w.CompactAt))
		}
	}
	if w.SaveNotes != nil {
		s.SaveNotes = *w.SaveNotes
	}
	for _, f := range []struct {
		name string
		v    *float64
		to   *float64
	}{{"answer", w.Answer, &s.Answer}, {"margin", w.Margin, &s.Margin}} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 || *f.v >= 0.5 {
			return s, keyError("window."+f.name, fmt.Errorf("window.%s %v is not a share of the window from 0 to under a half", f.name, *f.v))
		}
		*f.to = *f.v
	}
	if w.Unknown != nil {
		if *w.Unknown < 1024 {
			return s, keyError("window.unknown", fmt.Errorf("window.unknown %d is under 1024 tokens", *w.Unknown))
		}
		s.Unknown = *w.Unknown
	}
	return s, nil
}

// maxConfig bounds config.json.
const maxConfig = 1 << 20

// ReadSettings reads the agent's settings from its config.json: a
// missing file is defaults. model, when not "", is --model's, and wins.
func ReadSettings(ctx context.Context, p store.Paths, model string) (harness.Settings, error) {
	s := harness.Settings{Model: model, Window: window.Defaults()}
	b, err := readConfig(p)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	return ParseSettings(b, model)
}

// readConfig reads the agent's config.json as every file of its own is
// read: never through a symbolic link (fsx.ErrSymlink), and no more than
// maxConfig bytes and one past it (ParseSettings refuses those).
func readConfig(p store.Paths) ([]byte, error) {
	f, err := fsx.OpenRegular(p.Config())
	if errors.Is(err, fsx.ErrSymlink) {
		return nil, fmt.Errorf("config.json is a symbolic link, refused: never followed: %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, fmt.Errorf("read config.json: %w", err)
	}
	return b, nil
}

// ReadAgentID reads the agent's ID from its config.json's "id": "" when
// the file or the key is absent.
func ReadAgentID(p store.Paths) (string, error) {
	b, err := readConfig(p)
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
			return harness.Settings{}, fmt.Errorf("config.json: %w", keyError("id", fmt.Errorf("id: %w", err)))
		}
	}
	if c.Storage.Conversations != "" {
		if err := driver.CheckName(c.Storage.Conversations); err != nil {
			return harness.Settings{}, fmt.Errorf("config.json: %w", keyError("storage.conversations", fmt.Errorf("storage: %w", err)))
		}
	}
	for i, f := range c.Model.Fallbacks {
		if f == "" {
			return harness.Settings{}, fmt.Errorf("config.json: %w", keyError("model.fallbacks", fmt.Errorf("model.fallbacks[%d] is empty: name a model or an alias", i)))
		}
	}
	if c.Model.Answer < 0 {
		return harness.Settings{}, fmt.Errorf("config.json: %w", keyError("model.answer", fmt.Errorf("model.answer %d is negative", c.Model.Answer)))
	}
	tools, each, err := toolSpecs(c.Tools, c.Tool)
	if err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	instructions, err := instructionSettings(c.Instructions)
	if err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	win, err := c.Window.settings()
	if err != nil {
		return harness.Settings{}, fmt.Errorf("config.json: %w", err)
	}
	s := harness.Settings{
		Instructions:  instructions,
		Connections:   connections(c.Connections),
		Model:         c.Model.Name,
		Aliases:       c.Model.Aliases,
		Fallbacks:     c.Model.Fallbacks,
		Conversations: c.Storage.Conversations,
		Verbose:       c.Chat.Verbose,
		MaxTokens:     c.Model.Answer,
		ToolsSpec:     tools,
		ToolSpecs:     each,
		Window:        win,
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
				return nil, keyError("instructions."+name, fmt.Errorf("instructions: %s: a file's name, \"none\" or {\"file\", \"max\", \"depth\"}: %v", name, err))
			}
			src = prompts.Source{File: t.File, Max: t.Max, Depth: t.Depth}
		}
		// Each section checked alone, so a refusal names its key.
		if err := (prompts.Settings{name: src}).Validate(); err != nil {
			return nil, keyError("instructions."+name, err)
		}
		out[name] = src
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

// KeyError is a refusal of one key of config.json, named as its table
// and key are (window.max, instructions.notes, tool.web), so a spec
// configured into config.json says the line it wrote it on.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Err.Error() }

// ConfigKey is the key refused (agentspec.Keyed).
func (e *KeyError) ConfigKey() string { return e.Key }
func (e *KeyError) Unwrap() error     { return e.Err }

func keyError(key string, err error) error { return &KeyError{Key: key, Err: err} }

// Configure is Link Harness's configure command, named name
// (lnk-link-harness, lnk agent): the agent's spec written as its
// config.json in its folder (store.For), refused as ParseSettings would
// refuse it at a turn, so a spec that configures is one the harness runs
// on.
func Configure(name string) agentspec.Program {
	return agentspec.Program{
		Name: name,
		Folder: func(home, agent string) (string, error) {
			p, err := store.For(home, agent)
			return p.Root, err
		},
		Check: func(config []byte) error {
			_, err := ParseSettings(config, "")
			return err
		},
	}
}
