//go:build unix

package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"golang.org/x/sys/unix"
)

// A conversation kept compact whose events file is a named pipe is
// skipped, saying why, and the search answers from the others: reading
// it through its driver waited at the pipe's open for good, holding
// memory's lock, so no search of the agent's ever answered again.
func TestSearchConversationNamedPipe(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	say(t, p, log.Open(p.Chats()), "telegram:1", "my bike is parked at the north station", "Noted: north station.")
	dir, _ := p.Conversation("slack:2")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "events.zst"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	say(t, p, compact.Open(p.Chats()), "slack:2", "the bike shop opens at nine", "I'll remember.")
	tail := filepath.Join(dir, "events.jsonl")
	if err := os.Remove(tail); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(tail, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan memory.Found, 1)
	go func() {
		a, err := m.Search(context.Background(), "bike", 10)
		if err != nil {
			t.Error(err)
		}
		done <- a
	}()
	select {
	case a := <-done:
		if got := sources(a); len(got) != 1 || !strings.HasPrefix(got[0], "chats/telegram:1") {
			t.Errorf("results %v, want the log conversation's", got)
		}
		if said := strings.Join(a.Fresh.Skipped, "\n"); !strings.Contains(said, "chats/slack:2") || !strings.Contains(said, "not a regular file") {
			t.Errorf("the pipe isn't said: %q", said)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(tail, os.O_WRONLY, 0); err == nil { // let the wait end, for the test to
			f.Close()
		}
		t.Fatal("the search still waits after 10 s")
	}
}
