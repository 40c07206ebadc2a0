package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

var t0 = time.Date(2026, 11, 30, 9, 15, 0, 123456789, time.UTC)

// agent gives the paths of an agent in a fresh home.
func agent(t testing.TB) store.Paths {
	t.Helper()
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openers opens each driver this package's tests have, by name.
func openers(t testing.TB) map[string]store.Opener {
	t.Helper()
	return map[string]store.Opener{
		store.Log: func(chats string) (store.Conversations, error) { return log.Open(chats), nil },
		sqlite.Name: func(chats string) (store.Conversations, error) {
			return sqlite.Open(chats)
		},
		store.Compact: func(chats string) (store.Conversations, error) { return compact.Open(chats), nil },
	}
}

// drivers opens every driver on p's conversations folder, closed at the
// test's end.
func drivers(t testing.TB, p store.Paths) map[string]store.Conversations {
	t.Helper()
	out := map[string]store.Conversations{}
	for name, open := range openers(t) {
		d, err := open(p.Chats())
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		if c, ok := d.(store.Closer); ok {
			t.Cleanup(func() { c.Close() })
		}
		out[name] = d
	}
	return out
}

// router routes p's conversations, beginning new ones kind's way.
func router(t testing.TB, p store.Paths, kind string) *store.Router {
	t.Helper()
	r, err := store.NewRouter(p, kind, drivers(t, p))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// conversation is turns turns of the owner's: a message, an answer that
// calls a tool, the tool's answer, and the final answer; every third turn
// is a message from a schedule, and every fourth ends with a summary and a
// checkpoint.
func conversation(turns int, tag string) []store.Event {
	var es []store.Event
	add := func(e store.Event) {
		e.Seq = int64(len(es) + 1)
		e.Time = t0.Add(time.Duration(e.Seq) * time.Second)
		es = append(es, e)
	}
	for i := 1; i <= turns; i++ {
		m := store.Event{Kind: store.KindMessage, Header: "Mon 30 Nov 2026, 10:15", Text: fmt.Sprintf("question %d of %s", i, tag)}
		if i%3 == 0 {
			m.From, m.Text = "schedule:daily", fmt.Sprintf("scheduled %d of %s", i, tag)
		}
		add(m)
		add(store.Event{Kind: store.KindAnswer, Text: fmt.Sprintf("looking %d", i), Model: "anthropic/claude-opus-5-5",
			Thinking: []store.Thinking{{Text: "hmm", Signature: "sig"}},
			Calls:    []store.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "memory__search", Input: `{"query":"q"}`}}})
		add(store.Event{Kind: store.KindToolResult, CallID: fmt.Sprintf("call_%d", i), Tool: "memory__search", Text: fmt.Sprintf("tool said %d", i)})
		add(store.Event{Kind: store.KindAnswer, Text: fmt.Sprintf("answer %d of %s", i, tag), Model: "anthropic/claude-opus-5-5",
			Usage: &store.Usage{In: 100, Out: 10}})
		if i%4 == 0 {
			add(store.Event{Kind: store.KindSummary, Text: fmt.Sprintf("summary to %d", i), Covers: &store.Range{From: 1, To: int64(len(es))}})
			add(store.Event{Kind: store.KindCheckpoint, Window: &store.Checkpoint{Start: int64(len(es)), StartTime: t0, TokensBefore: 999}})
		}
	}
	return es
}

func appendAll(t testing.TB, c store.Conversations, thread string, es []store.Event) {
	t.Helper()
	for _, e := range es {
		if err := c.Append(context.Background(), thread, e); err != nil {
			t.Fatalf("append %s#%d: %v", thread, e.Seq, err)
		}
	}
}

func readAll(t testing.TB, c store.Conversations, thread string) []store.Event {
	t.Helper()
	es, err := c.Read(context.Background(), thread, 1)
	if err != nil {
		t.Fatalf("read %s: %v", thread, err)
	}
	return es
}

// sameLines fails t unless got and want are the same events, line for
// line, byte for byte.
func sameLines(t testing.TB, what string, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range want {
		a, _ := store.MarshalLine(got[i])
		b, _ := store.MarshalLine(want[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: event %d is\n%s want\n%s", what, i+1, a, b)
		}
	}
}
