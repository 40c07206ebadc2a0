package home

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"
)

// TestMissesRemember: on Linux a miss in a settled folder is remembered
// and answered from memory; one in a folder changed within Settle is
// not remembered.
func TestMissesRemember(t *testing.T) {
	ctx := context.Background()
	f, _ := agentHome(t, map[string]string{"memory/other.md": "x"})
	m := &Misses{Files: f, Now: later}
	if _, err := m.ReadFile(ctx, "main", "memory/notes.md", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if !m.stillMissing(ctx, "main", "memory/notes.md") {
		t.Fatal("a miss in a settled folder is not remembered")
	}

	fresh := &Misses{Files: f, Now: time.Now} // the folder was made just now
	if _, err := fresh.ReadFile(ctx, "main", "memory/notes.md", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if fresh.stillMissing(ctx, "main", "memory/notes.md") {
		t.Fatal("a miss in a folder changed within Settle is remembered")
	}
}
