package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/home"
)

// Settings are the scheduler's, the "scheduler" table of the agent's
// config.json, read at each call:
//
//	"scheduler": {"zone": "Europe/Paris", "max_schedules": 10000, "max_tasks": 8}
//
// zone is the zone a schedule's times are in when its call names none
// (an IANA name; default the machine's); max_schedules the most
// schedules the agent may have at once; max_tasks the most of its tasks
// (subagents) that run at once.
type Settings struct {
	Zone         string `json:"zone"`
	MaxSchedules int    `json:"max_schedules"`
	MaxTasks     int    `json:"max_tasks"`
}

// The bounds of Settings.
const (
	DefaultMaxSchedules = 10000
	MostSchedules       = 100000
	maxConfig           = 1 << 20
)

// Defaults are the scheduler's settings for an agent whose config.json
// says none.
func Defaults() Settings {
	return Settings{MaxSchedules: DefaultMaxSchedules, MaxTasks: DefaultMaxTasks}
}

// ParseSettings reads the "scheduler" table of config.json (b) over
// Defaults, refusing an unknown key, a zone that doesn't exist and a
// count past its bounds, each by its name. An absent file (nil b) or
// table is Defaults.
func ParseSettings(b []byte) (Settings, error) {
	s := Defaults()
	if len(bytes.TrimSpace(b)) == 0 {
		return s, nil
	}
	var top struct {
		Scheduler json.RawMessage `json:"scheduler"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return s, fmt.Errorf("config.json: %w", err)
	}
	if len(top.Scheduler) == 0 || string(top.Scheduler) == "null" {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Scheduler))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Defaults(), fmt.Errorf(`config.json's "scheduler": %w`, err)
	}
	if s.MaxSchedules < 1 || s.MaxSchedules > MostSchedules {
		return Defaults(), fmt.Errorf(`config.json's "scheduler": max_schedules is 1 to %d`, MostSchedules)
	}
	if s.MaxTasks < 1 || s.MaxTasks > MaxMaxTasks {
		return Defaults(), fmt.Errorf(`config.json's "scheduler": max_tasks is 1 to %d`, MaxMaxTasks)
	}
	if _, err := LoadZone(s.Zone); err != nil {
		return Defaults(), fmt.Errorf(`config.json's "scheduler": %w`, err)
	}
	return s, nil
}

// ReadSettings reads the scheduler's settings from the agent's
// config.json, never through a link, bounded (Defaults when there is
// none).
func ReadSettings(ctx context.Context, p store.Paths) (Settings, error) {
	b, err := home.Files{Home: filepath.Dir(filepath.Dir(p.Root))}.ReadFile(ctx, p.Agent, "config.json", maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		return Defaults(), fmt.Errorf("read config.json: %w", err)
	}
	return ParseSettings(b)
}
