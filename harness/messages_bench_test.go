package harness

import (
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// BenchmarkRequestMessages is a turn's messages made from the events of
// a conversation of 64 turns (a message with its header and an answer
// each), as each round of each turn makes them.
func BenchmarkRequestMessages(b *testing.B) {
	var events []store.Event
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 64 {
		seq := int64(2*i + 1)
		events = append(events,
			store.Event{Seq: seq, Time: at, Kind: store.KindMessage, Header: "[" + strconv.Itoa(i) + " Link, your owner]", Text: "hello"},
			store.Event{Seq: seq + 1, Time: at, Kind: store.KindAnswer, Text: "[offline model] You said: hello"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if ms := messages(events, true); len(ms) != 128 || len(ms[126].Parts) != 2 {
			b.Fatalf("%d messages", len(ms))
		}
	}
}
