package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/tools/sandbox"
)

// Settings are run's, the "run" table of the agent's config.json, read
// at each call:
//
//	"run": {
//	  "timeout": 30, "max_timeout": 600,
//	  "network": false,
//	  "sandbox": "on",
//	  "env": {"GOFLAGS": "-mod=mod"},
//	  "read": ["/home/me/go"],
//	  "output": 32768,
//	  "limits": {"processes": 256, "memory": 8589934592, "cpu_seconds": 600, "file_size": 1073741824, "open_files": 1024},
//	  "background": {"max_running": 16, "output": 8388608}
//	}
//
// timeout is a command's in seconds when its call says none, max_timeout
// the most a call may ask; network lets commands reach the network;
// sandbox "off" runs commands unconfined (only for a kernel without
// Landlock or user namespaces, said in the README); env is added to
// each command's environment (PATH replaces the default); read are more
// folders commands may read; output is the most of a command's standard
// output answered (its standard error a quarter of it); limits bound each
// command (sandbox.Limits); background bounds the background commands
// (run__start): how many run at once, and how many bytes of each one's
// latest output are kept.
type Settings struct {
	Timeout    int               `json:"timeout"`
	MaxTimeout int               `json:"max_timeout"`
	Network    bool              `json:"network"`
	Sandbox    string            `json:"sandbox"`
	Env        map[string]string `json:"env"`
	Read       []string          `json:"read"`
	Output     int               `json:"output"`
	Limits     sandbox.Limits    `json:"limits"`
	Background Background        `json:"background"`
}

// Background is the "background" table of run's settings.
type Background struct {
	MaxRunning int   `json:"max_running"`
	Output     int64 `json:"output"`
}

// The bounds of Settings: Link's defaults, and the most each may be.
const (
	DefaultTimeout    = 30
	DefaultMaxTimeout = 600
	MostTimeout       = 24 * 3600
	DefaultOutput     = 32 << 10
	MostOutput        = 1 << 20
	leastOutput       = 1 << 10

	DefaultMaxRunning = 16
	MostRunning       = 256
	DefaultKeep       = 8 << 20
	LeastKeep         = 64 << 10
	MostKeep          = 1 << 30
)

// Defaults are run's settings for an agent whose config.json says none.
func Defaults() Settings {
	return Settings{Timeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout, Sandbox: "on", Output: DefaultOutput, Limits: sandbox.DefaultLimits,
		Background: Background{MaxRunning: DefaultMaxRunning, Output: DefaultKeep}}
}

// ParseSettings reads the "run" table of config.json (b) over Defaults,
// refusing an unknown key and a value past its bounds, each by its name.
// An absent file (nil b) or table is Defaults.
func ParseSettings(b []byte) (Settings, error) {
	s := Defaults()
	if len(bytes.TrimSpace(b)) == 0 {
		return s, nil
	}
	var top struct {
		Run json.RawMessage `json:"run"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return s, fmt.Errorf("config.json: %w", err)
	}
	if len(top.Run) == 0 || string(top.Run) == "null" {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Run))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Defaults(), fmt.Errorf(`config.json's "run": %w`, err)
	}
	if err := s.check(); err != nil {
		return Defaults(), fmt.Errorf(`config.json's "run": %w`, err)
	}
	s.Limits = s.Limits.WithDefaults()
	return s, nil
}

func (s Settings) check() error {
	switch {
	case s.Timeout < 1 || s.Timeout > MostTimeout:
		return fmt.Errorf("timeout is 1 to %d seconds", MostTimeout)
	case s.MaxTimeout < 1 || s.MaxTimeout > MostTimeout:
		return fmt.Errorf("max_timeout is 1 to %d seconds", MostTimeout)
	case s.Timeout > s.MaxTimeout:
		return fmt.Errorf("timeout (%d s) is past max_timeout (%d s)", s.Timeout, s.MaxTimeout)
	case s.Sandbox != "on" && s.Sandbox != "off":
		return errors.New(`sandbox is "on" or "off"`)
	case s.Output < leastOutput || s.Output > MostOutput:
		return fmt.Errorf("output is %d to %d bytes", leastOutput, MostOutput)
	case s.Background.MaxRunning < 1 || s.Background.MaxRunning > MostRunning:
		return fmt.Errorf("background.max_running is 1 to %d commands", MostRunning)
	case s.Background.Output < LeastKeep || s.Background.Output > MostKeep:
		return fmt.Errorf("background.output is %d to %d bytes", LeastKeep, MostKeep)
	case s.Limits.Processes < 0 || s.Limits.Memory < 0 || s.Limits.CPUSeconds < 0 || s.Limits.FileSize < 0 || s.Limits.OpenFiles < 0:
		return errors.New("limits are counts, 0 (Link's default) or more")
	}
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf("env %q: a name without = or NUL, a value without NUL", k)
		}
	}
	for _, p := range s.Read {
		if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
			return fmt.Errorf("read %q: an absolute path", p)
		}
	}
	return nil
}
