package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/memory/fts"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/transcript"
)

// newMemory is the memory of agent main at home, its index in its
// memory folder, its conversations read by the log and compact drivers.
func newMemory(tb testing.TB, home string) (*memory.Memory, store.Paths) {
	tb.Helper()
	p, err := store.For(home, "main")
	if err != nil {
		tb.Fatal(err)
	}
	return newMemoryWith(tb, p, nil)
}

// newMemoryWith is newMemory of the agent at p, with an embedder, its
// config changed by each of edit.
func newMemoryWith(tb testing.TB, p store.Paths, e memory.Embedder, edit ...func(*memory.Config)) (*memory.Memory, store.Paths) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(p.Root, "memory"), 0o700); err != nil {
		tb.Fatal(err)
	}
	idx, err := fts.Open(context.Background(), filepath.Join(p.Root, "memory", "index.sqlite"))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := router.New(p, log.Name, map[string]store.Conversations{log.Name: log.Open(p.Chats()), compact.Name: compact.Open(p.Chats())})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := memory.Config{Paths: p, Index: idx, Conversations: r, Embedder: e, Now: func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }}
	for _, f := range edit {
		f(&cfg)
	}
	m, err := memory.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m, p
}

func write(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// say keeps a conversation in thread of pairs of owner's messages and
// agent's answers, the driver writing it, and its copy made as the
// harness makes it.
func say(tb testing.TB, p store.Paths, conv store.Conversations, thread string, pairs ...string) {
	tb.Helper()
	ctx := context.Background()
	next, err := store.Next(ctx, conv, thread)
	if err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var turn []store.Event
	for i, text := range pairs {
		e := store.Event{Seq: next, Time: at.Add(time.Duration(next) * time.Minute), Kind: store.KindMessage, Text: text}
		if i%2 == 1 {
			e.Kind = store.KindAnswer
		}
		if err := conv.Append(ctx, thread, e); err != nil {
			tb.Fatal(err)
		}
		turn = append(turn, e)
		next++
	}
	if err := transcript.Append(ctx, p, conv, thread, "", turn); err != nil {
		tb.Fatal(err)
	}
}
