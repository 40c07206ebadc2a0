package agentspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lnk-dev/link/internal/fsx"
)

// FileName is an agent's spec in its folder (<home>/agents/<agent>/),
// beside the config.json configure writes from it.
const FileName = "spec.toml"

// Keyed is a refusal of one key of config.json by its reader, which
// names it as the spec does (window.max, instructions.notes), so
// WriteConfig says the line the spec wrote it on.
type Keyed interface {
	error
	ConfigKey() string
}

// Configured is what WriteConfig wrote: config.json's bytes, and the
// tables the config.json it replaced had that the spec doesn't (now
// their readers' defaults).
type Configured struct {
	Config  []byte
	Dropped []string
}

// WriteConfig reads the spec at spec and writes it as config.json at
// config: the spec refused (Parse) or its config.json refused by check
// (the settings' own reader; nil takes any), nothing is written, and the
// config.json there stays whole. It is written through a temporary file
// beside it, synced and renamed over it, the folder synced after
// (fsx.Replace), so a crash leaves the old or the new, never half; the
// folder is made (0700) when missing. Each refusal starts with the
// spec's path and says the line.
func WriteConfig(spec, config string, check func(config []byte) error) (Configured, error) {
	b, err := fsx.ReadLimit(spec, MaxSpec)
	switch {
	case err != nil:
		return Configured{}, fmt.Errorf("read the spec: %w", err)
	case b == nil:
		if _, err := os.Lstat(spec); err != nil {
			return Configured{}, fmt.Errorf(`no spec at %s: write one (docs/agents.md, "The agent's spec")`, spec)
		}
	}
	p, err := Parse(b)
	if err != nil {
		return Configured{}, inSpec(spec, err)
	}
	out, err := p.Config()
	if err != nil {
		return Configured{}, inSpec(spec, err)
	}
	if check != nil {
		if err := check(out); err != nil {
			var k Keyed
			if errors.As(err, &k) {
				return Configured{}, inSpec(spec, p.Refuse(k.ConfigKey(), k))
			}
			return Configured{}, inSpec(spec, err)
		}
	}
	dropped := dropped(config, out)
	if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
		return Configured{}, err
	}
	if err := fsx.Replace(config, out, true); err != nil {
		return Configured{}, fmt.Errorf("write %s: %w", config, err)
	}
	return Configured{Config: out, Dropped: dropped}, nil
}

// inSpec says err is the spec's at path, each line of it.
func inSpec(path string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = path + ": " + l
	}
	return errors.New(strings.Join(lines, "\n"))
}

// dropped are the tables the config.json at path has and out hasn't;
// none when it can't be read.
func dropped(path string, out []byte) []string {
	old, err := fsx.ReadLimit(path, MaxSpec)
	if err != nil || old == nil {
		return nil
	}
	var was, is map[string]json.RawMessage
	if json.Unmarshal(old, &was) != nil || json.Unmarshal(out, &is) != nil {
		return nil
	}
	var gone []string
	for k := range was {
		if _, ok := is[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	return gone
}
