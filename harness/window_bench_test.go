package harness_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// benchRoom is about the conversation's room the harness works out for
// the offline model under Link's [window] (an unknown model's 32,768
// tokens, less the answer's, the instructions and the margin), so the
// conversations written here are as the harness would have left them.
const benchRoom = 26000

// writeWindowed writes thread's events.jsonl as the harness leaves a log
// conversation of n events: the owner's messages each answered, events of
// about 180 tokens, each answer recording the window's checkpoint, and a
// summary at each drop point once the window passes compact_at.
func writeWindowed(tb testing.TB, p store.Paths, thread string, n int) {
	tb.Helper()
	dir, err := p.Conversation(thread)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	set := window.Defaults()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var events []store.Event
	var data []byte
	cp := store.Checkpoint{Start: 1, StartTime: at}
	from := 0 // events[from] is cp.Start's
	add := func(e store.Event) {
		e.Seq, e.Time = int64(len(events)+1), at.Add(time.Duration(len(events))*time.Second)
		line, err := store.MarshalLine(e)
		if err != nil {
			tb.Fatal(err)
		}
		data = append(data, line...)
		events = append(events, e)
	}
	text := strings.Repeat("how are the plans for the weekend coming along, and the train? ", 11)
	for len(events) < n {
		add(store.Event{Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:15 UTC, telegram]", Text: text})
		w := cp
		add(store.Event{Kind: store.KindAnswer, Text: text, Model: "offline", Seen: int64(len(events)), Window: &w})
		if v := window.Of(events[from:], cp); set.Due(v.Tokens, benchRoom) && len(events) < n-2 {
			if next, ok := window.Next(events[from:], cp, benchRoom); ok {
				nc := next
				add(store.Event{Kind: store.KindSummary, Text: "a summary of what came before", Covers: &store.Range{From: 1, To: next.Start - 1}, Window: &nc})
				cp, from = next, int(next.Start-1)
			}
		}
	}
	if err := os.WriteFile(dir+"/events.jsonl", data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTurnWindow is one turn of a log conversation of 100 events and of
// 100,000, as the harness leaves them (checkpoints, summaries), none of
// it kept in memory between turns, so each turn reads its window from
// the store: its latest events backwards for the checkpoint, then from
// the window's start. A turn's cost doesn't grow with the conversation:
// the ratio of the two is reported as ratio (target at most 1.3).
func BenchmarkTurnWindow(b *testing.B) {
	var per [2]float64
	for i, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("log-%d", n), func(b *testing.B) {
			home := b.TempDir()
			cfg := harnesstest.Config(home, scripted.Offline{Why: "bench"}, harness.Settings{Model: "offline", Window: window.Defaults()})
			cfg.KeepEvents = -1
			h, err := harness.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { h.Close() })
			p, _ := store.For(home, testAgent)
			const thread = "telegram:1"
			writeWindowed(b, p, thread, n)
			ctx := context.Background()
			s := &quietStream{}
			block := []acp.Block{{Type: "text", Text: "hello"}}
			// One turn first: it makes the copy for people, which a
			// conversation written here lacks and a real one has.
			if _, err := h.Prompt(ctx, acp.Prompt{Agent: testAgent, Thread: thread, Blocks: block}, s); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			began := time.Now()
			for range b.N {
				if _, err := h.Prompt(ctx, acp.Prompt{Agent: testAgent, Thread: thread, Blocks: block}, s); err != nil {
					b.Fatal(err)
				}
			}
			per[i] = float64(time.Since(began)) / float64(b.N)
		})
	}
	if per[0] > 0 && per[1] > 0 {
		b.ReportMetric(per[1]/per[0], "ratio")
		fmt.Printf("BenchmarkTurnWindow: log, 100,000 events against 100: ratio %.2f\n", per[1]/per[0])
	}
}
