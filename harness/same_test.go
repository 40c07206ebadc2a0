//go:build !race

// Allocation counts are the race detector's own under -race: this runs without it.

package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// same says what comparing the events' store.MarshalLine lines says, a
// large text held and filled included, and takes fewer allocations.
func TestSameAsMarshalLine(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	big := strings.Repeat("<a long text & more>\n", 4000) // past jsonx.MinHole
	base := store.Event{Seq: 7, Time: at, Kind: store.KindAnswer, Text: "hi", Model: "m"}
	withBig := base
	withBig.Text = big
	withParts := base
	withParts.Parts = []store.Part{{Type: "image", MimeType: "image/png", Data: big}}
	other := func(f func(*store.Event)) store.Event { e := base; f(&e); return e }
	events := []store.Event{
		base, withBig, withParts,
		other(func(e *store.Event) { e.Seq = 8 }),
		other(func(e *store.Event) { e.Time = at.In(time.FixedZone("x", 3600)) }),
		other(func(e *store.Event) { e.Text = "hj" }),
		other(func(e *store.Event) { e.Steered = true }),
	}
	for i, a := range events {
		for j, b := range events {
			x, errX := store.MarshalLine(a)
			y, errY := store.MarshalLine(b)
			want := errX == nil && errY == nil && bytes.Equal(x, y)
			if got := same(a, b); got != want {
				t.Errorf("same(events[%d], events[%d]) = %v, MarshalLine's lines say %v", i, j, got, want)
			}
		}
	}
	b := base
	line := testing.AllocsPerRun(50, func() {
		x, _ := store.MarshalLine(base)
		y, _ := store.MarshalLine(b)
		_ = bytes.Equal(x, y)
	})
	if got := testing.AllocsPerRun(50, func() { _ = same(base, b) }); got >= line {
		t.Errorf("same made %v allocations, comparing MarshalLine's lines %v", got, line)
	}
}
