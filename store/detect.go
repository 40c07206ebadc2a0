package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// The ways a conversation is kept that Link Harness has itself.
const (
	Log     = "log"     // events.jsonl
	Compact = "compact" // zstd frames in events.zst, the tail in events.jsonl
)

// MarkerPrefix starts the name of the empty file that says a driver keeps
// a conversation: store.sqlite, store.gcs.
const MarkerPrefix = "store."

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
