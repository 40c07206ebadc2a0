package harness_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/gcs"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/sqlite"
)

// benchRoom is about the conversation's room the harness works out for
// the offline model under Link's [window] (an unknown model's 32,768
// tokens, less the answer's, the instructions and the margin), so the
// conversations written here are as the harness would have left them.
const benchRoom = 26000

// writeWindowed writes thread's events.jsonl of events.
func writeWindowed(tb testing.TB, p store.Paths, thread string, events []store.Event) {
	tb.Helper()
	dir, err := p.Conversation(thread)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	var data []byte
	for _, e := range events {
		line, err := store.MarshalLine(e)
		if err != nil {
			tb.Fatal(err)
		}
		data = append(data, line...)
	}
	if err := os.WriteFile(dir+"/events.jsonl", data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// windowedEvents are n events as the harness leaves a conversation: the
// owner's messages each answered, events of about 180 tokens, each
// answer recording the window's checkpoint, and a summary at each drop
// point once the window passes compact_at.
func windowedEvents(tb testing.TB, n int) []store.Event {
	tb.Helper()
	set := window.Defaults()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var events []store.Event
	cp := store.Checkpoint{Start: 1, StartTime: at}
	from := 0 // events[from] is cp.Start's
	add := func(e store.Event) {
		e.Seq, e.Time = int64(len(events)+1), at.Add(time.Duration(len(events))*time.Second)
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
	return events
}

// BenchmarkTurnWindow is a turn of a conversation of 100 events and one
// of 100,000, as the harness leaves them (checkpoints, summaries), none
// of it kept in memory between turns, so each turn reads its window from
// the store: its latest events backwards for the checkpoint, then from
// the window's start. It runs for the log and for each store driver,
// SQLite and GCS (on fake-gcs-server, its objects in files under
// /dev/shm where there is one). The two conversations are two agents'
// of one harness, each in a store of its own (fake-gcs-server lists a
// bucket by walking every object in it, where Cloud Storage lists a
// prefix), and take turns, so a load that comes and goes on a shared
// machine weighs on both alike; it reports each one's median turn and
// the ratio of the two (target at most 1.3: a turn's cost doesn't grow
// with the conversation).
func BenchmarkTurnWindow(b *testing.B) {
	for _, driver := range []string{log.Name, "sqlite", "gcs"} {
		b.Run(driver, func(b *testing.B) {
			short, long := benchTurnWindow(b, driver)
			b.ReportMetric(short, "p50-ms-100")
			b.ReportMetric(long, "p50-ms-100k")
			b.ReportMetric(long/short, "ratio")
			fmt.Printf("BenchmarkTurnWindow: %s, 100,000 events against 100: %.2f ms against %.2f, ratio %.2f\n", driver, long, short, long/short)
		})
	}
}

// benchTurnWindow runs b.N turns of a conversation of 100 events and as
// many of one of 100,000, kept by driver, in turns, and gives each one's
// median turn in milliseconds.
func benchTurnWindow(b *testing.B, driver string) (short, long float64) {
	home := b.TempDir()
	agents := []string{"short", "long"}
	sizes := []int{100, 100_000}
	const thread = "telegram:1"
	var fake gcsBench
	if driver == "gcs" {
		fake = gcsFake(b)
	}
	stores := map[string]map[string]store.Conversations{}
	for i, agent := range agents {
		p, err := store.For(home, agent)
		if err != nil {
			b.Fatal(err)
		}
		drivers, err := harnesstest.Drivers(p)
		if err != nil {
			b.Fatal(err)
		}
		stores[agent] = drivers
		events := windowedEvents(b, sizes[i])
		switch driver {
		case log.Name:
			writeWindowed(b, p, thread, events)
			continue
		case "sqlite":
			d, err := sqlite.Open(p.Chats())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Close() })
			drivers[driver] = d
		case "gcs":
			drivers[driver] = gcsOpen(b, fake.srv, agent)
		}
		// The first through the router, which makes the conversation's
		// folder and marker; the rest as fast as the driver's files take
		// them.
		r, err := router.New(p, driver, drivers)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Append(context.Background(), thread, events[0]); err != nil {
			b.Fatal(err)
		}
		if driver == "sqlite" {
			sqliteFill(b, drivers[driver].(*sqlite.Driver), thread, events[1:])
		} else {
			fake.fill(b, agent, thread, events[1:])
		}
	}
	cfg := harnesstest.Config(home, scripted.Offline{Why: "bench"}, harness.Settings{Model: "offline", Window: window.Defaults(), Conversations: driver})
	cfg.KeepEvents = -1
	cfg.Drivers = func(p store.Paths) (map[string]store.Conversations, error) { return stores[p.Agent], nil }
	h, err := harness.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	ctx := context.Background()
	s := &quietStream{}
	block := []acp.Block{{Type: "text", Text: "hello"}}
	turn := func(agent string) time.Duration {
		began := time.Now()
		if _, err := h.Prompt(ctx, acp.Prompt{Agent: agent, Thread: thread, Blocks: block}, s); err != nil {
			b.Fatal(err)
		}
		return time.Since(began)
	}
	// One turn of each first: it makes the copy for people, which a
	// conversation written here lacks and a real one has.
	for _, agent := range agents {
		turn(agent)
	}
	times := [2][]time.Duration{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for k := range agents {
			k = (k + i) % 2 // each first in every other pair
			times[k] = append(times[k], turn(agents[k]))
		}
	}
	b.StopTimer()
	p50 := func(ts []time.Duration) float64 {
		slices.Sort(ts)
		return float64(ts[(len(ts)-1)/2]) / float64(time.Millisecond)
	}
	return p50(times[0]), p50(times[1])
}

// sqliteFill adds events to thread in d's file in one transaction.
func sqliteFill(b *testing.B, d *sqlite.Driver, thread string, events []store.Event) {
	db, err := sql.Open("sqlite", d.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range events {
		line, err := store.MarshalLine(e)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO events (thread, seq, body) VALUES (?, ?, ?)`, thread, e.Seq, line)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// gcsBench is a fake-gcs-server and the folder it keeps its objects in.
type gcsBench struct {
	srv  *fakestorage.Server
	root string
}

// gcsFake is a fake-gcs-server keeping its objects in files (its memory
// keeps a bucket as one list searched end to end at each call), under
// /dev/shm where there is one.
func gcsFake(b *testing.B) gcsBench {
	root := "/dev/shm"
	if _, err := os.Stat(root); err != nil {
		root = ""
	}
	dir, err := os.MkdirTemp(root, "lnk-bench-gcs-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1", StorageRoot: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	return gcsBench{srv: srv, root: dir}
}

// gcsObject is the name of thread's event seq in the bucket gcsOpen
// opens, as the driver names it (store/gcs, names.go).
func gcsObject(b *testing.B, thread string, seq int64) string {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("chats/%s/events/%020d.json", name, seq)
}

// gcsOpen is the GCS driver of agent, on a bucket of its own (named as
// the agent) on srv.
func gcsOpen(b *testing.B, srv *fakestorage.Server, agent string) store.Conversations {
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: agent})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(tr.CloseIdleConnections)
	c, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.URL()+"/storage/v1/"), option.WithHTTPClient(&http.Client{Transport: tr}), option.WithoutAuthentication())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return gcs.Open(c, agent, "chats")
}
