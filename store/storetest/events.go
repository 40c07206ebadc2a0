package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// base is the time of the suite's first event: nanoseconds included, so a
// driver that rounds a time fails the round trip.
var base = time.Date(2026, 11, 30, 9, 15, 0, 123456789, time.UTC)

// Event is event seq of a conversation, of a kind chosen by seq, with
// every field its kind uses filled, so a round trip checks every field.
// Its texts carry tag, so events of two threads or two writers differ.
func Event(seq int64, tag string) store.Event {
	e := store.Event{Seq: seq, Time: base.Add(time.Duration(seq) * time.Second)}
	switch seq % 6 {
	case 1:
		e.Kind = store.KindMessage
		e.From = "telegram:7"
		e.FromName = "Ada Lovelace"
		e.Hops = 1
		e.Header = "Mon 30 Nov 2026, 10:15, telegram, Ada"
		e.Text = fmt.Sprintf("message %d of %s: \"quotes\", a tab\t, a newline\n, ünïcödé and 🙂", seq, tag)
		e.Parts = []store.Part{
			{Type: "image", MimeType: "image/png", Name: "dot.png", Data: "iVBORw0KGgo="},
			{Type: "resource", MimeType: "text/plain", Name: "file:///notes.txt", Text: "a text resource"},
		}
		e.Steered = true
		e.MessageID = fmt.Sprintf("schedule:r1.%d", seq)
	case 2:
		e.Kind = store.KindAnswer
		e.Text = fmt.Sprintf("answer %d of %s", seq, tag)
		e.Thinking = []store.Thinking{{Text: "thinking it over", Signature: "sig=="}, {Redacted: "opaque"}}
		e.Calls = []store.ToolCall{{ID: "call_1", Name: "memory__search", Input: `{"query":"lunch"}`}}
		e.Model = "anthropic/claude-opus-5-5"
		e.Provider = "anthropic"
		e.ResponseID = "msg_01ABC"
		e.Usage = &store.Usage{In: 1200, Out: 85, CacheRead: 1000, CacheWrite: 200}
		e.LatencyMS = 842
		e.CostUSD = 0.00125
	case 3:
		e.Kind = store.KindToolResult
		e.CallID = "call_1"
		e.Tool = "memory__search"
		e.Text = fmt.Sprintf("result %d of %s", seq, tag)
		e.IsError = true
	case 4:
		e.Kind = store.KindSummary
		e.Text = fmt.Sprintf("summary %d of %s", seq, tag)
		e.Covers = &store.Range{From: 1, To: seq - 1}
		e.Model = "anthropic/claude-opus-5-5"
	case 5:
		e.Kind = store.KindModelSet
		e.Model = "openai/gpt-6-luna"
		e.Provider = "openai"
	default:
		e.Kind = store.KindCheckpoint
		e.Window = &store.Checkpoint{Start: seq - 2, StartTime: base.Add(time.Duration(seq-2) * time.Second), TokensBefore: 4096 + seq}
	}
	return e
}

// Events is events 1 to n of a conversation, as Event makes them.
func Events(n int, tag string) []store.Event {
	es := make([]store.Event, n)
	for i := range es {
		es[i] = Event(int64(i+1), tag)
	}
	return es
}

// Equal says whether two events are the same, their times compared as
// instants.
func Equal(a, b store.Event) bool {
	return reflect.DeepEqual(store.InUTC(a), store.InUTC(b))
}

// Same fails t unless got holds the events want, in order.
func Same(t testing.TB, what string, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events (%s), want %d (%s)", what, len(got), seqs(got), len(want), seqs(want))
	}
	for i := range want {
		if !Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d is\n%+v\nwant\n%+v", what, i, store.InUTC(got[i]), store.InUTC(want[i]))
		}
	}
}

// seqs lists the numbers of es, shortened when long.
func seqs(es []store.Event) string {
	var b strings.Builder
	for i, e := range es {
		if i == 8 && len(es) > 10 {
			fmt.Fprintf(&b, " ... %d", es[len(es)-1].Seq)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, e.Seq)
	}
	return "[" + b.String() + "]"
}
