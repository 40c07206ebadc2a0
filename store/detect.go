package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The ways a conversation is kept that Link Harness has itself.
const (
	Log     = "log"     // events.jsonl
	Compact = "compact" // zstd frames in events.zst, the tail in events.jsonl
)

// MarkerPrefix starts the name of the empty file that says a driver keeps
// a conversation: store.sqlite, store.gcs.
const MarkerPrefix = "store."

// Detect says how the conversation in dir is kept: the driver an empty
// store.<driver> names, compact where events.zst is, else the log. A
// folder that doesn't exist reads as "", a conversation not yet begun.
func Detect(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("detect %s: %w", dir, err)
	}
	kind := Log
	for _, e := range entries {
		name := e.Name()
		if d, ok := strings.CutPrefix(name, MarkerPrefix); ok && d != "" {
			return d, nil
		}
		if name == "events.zst" {
			kind = Compact
		}
	}
	return kind, nil
}

// Mark writes the marker that says driver keeps the conversation in dir,
// creating the folder; the log and compact need none.
func Mark(dir, driver string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	if driver == Log || driver == Compact {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, MarkerPrefix+driver), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	return f.Close()
}
