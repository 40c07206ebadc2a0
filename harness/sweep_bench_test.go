package harness_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/store"
)

// sweepThreads and sweepEvents are the idle agent BenchmarkSweep sweeps:
// that many log conversations of that many events, every one answered.
const (
	sweepThreads = 1000
	sweepEvents  = 40
)

// BenchmarkSweep measures one crash sweep of an idle agent with many
// conversations, all answered, after a first sweep has looked at them:
// what the minute's sweep costs an agent nobody talks to.
func BenchmarkSweep(b *testing.B) {
	home := b.TempDir()
	p, err := store.For(home, testAgent)
	if err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	for i := range sweepThreads {
		writeAnswered(b, p, fmt.Sprintf("telegram:%d", i+1), sweepEvents, old)
	}
	h, err := harness.New(harnesstest.Config(home, offlineNow{}, harness.Settings{Model: "offline"}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if err := h.Sweep(ctx, testAgent); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := h.Sweep(ctx, testAgent); err != nil {
			b.Fatal(err)
		}
	}
}

// writeAnswered writes thread's events.jsonl as the log keeps it: n
// events, messages each answered, its files last changed at mod.
func writeAnswered(tb testing.TB, p store.Paths, thread string, n int, mod time.Time) {
	tb.Helper()
	dir, err := p.Conversation(thread)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	var data []byte
	at := mod.Add(-time.Hour).UTC()
	for i := 1; i <= n; i++ {
		e := store.Event{Seq: int64(i), Time: at, Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:15 UTC, telegram]", Text: "how are the plans for the weekend coming along?"}
		if i%2 == 0 {
			e = store.Event{Seq: int64(i), Time: at, Kind: store.KindAnswer, Text: "they're coming along nicely: the train is booked, the hotel too.", Model: "offline", Seen: int64(i - 1)}
		}
		line, err := store.MarshalLine(e)
		if err != nil {
			tb.Fatal(err)
		}
		data = append(data, line...)
	}
	name := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(name, mod, mod); err != nil {
		tb.Fatal(err)
	}
}
