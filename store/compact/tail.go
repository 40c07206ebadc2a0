package compact

import (
	"bytes"
	"fmt"

	"github.com/lnk-dev/link/store"
)

// tailLine is one complete line of the tail: an event and its bytes.
type tailLine struct {
	n     int    // its line number, from 1
	bytes []byte // the line, its newline included
	event store.Event
}

// parseTail reads data, the bytes of a tail, as events numbered one after
// another. It returns them and where the complete lines end: what follows
// is a final line no writer finished, never acknowledged, which no reader
// reads and the next writer cuts off. A complete line that isn't the
// next event is ErrCorrupt, the error naming its line number.
func parseTail(data []byte) (lines []tailLine, complete int, err error) {
	complete = bytes.LastIndexByte(data, '\n') + 1
	rest := data[:complete]
	for n := 1; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i+1]
		rest = rest[i+1:]
		e, err := store.ParseLine(line)
		if err != nil {
			return nil, 0, fmt.Errorf("line %d: %w", n, err)
		}
		if len(lines) > 0 && e.Seq != lines[len(lines)-1].event.Seq+1 {
			return nil, 0, fmt.Errorf("line %d: %w: event %d follows %d", n, store.ErrCorrupt, e.Seq, lines[len(lines)-1].event.Seq)
		}
		lines = append(lines, tailLine{n: n, bytes: line, event: e})
	}
	return lines, complete, nil
}

// merge joins the tail to the frames, whose last event is last. Tail
// events the frames hold already (a fold that stopped after writing its
// frame but before emptying the tail) are dropped, so each is read once;
// the rest must follow last. A frame cut short (cut, at end) must have its events
// still in the tail, since the tail is emptied only once a frame is on
// the disk; one whose events aren't there is ErrCorrupt.
func merge(last, end int64, cut bool, tail []tailLine) ([]tailLine, error) {
	i := 0
	for i < len(tail) && tail[i].event.Seq <= last {
		i++
	}
	kept := tail[i:]
	switch {
	case len(kept) > 0 && kept[0].event.Seq != last+1:
		return nil, fmt.Errorf("%s line %d: %w: event %d follows the frames' last, %d", tailName, kept[0].n, store.ErrCorrupt, kept[0].event.Seq, last)
	case cut && len(kept) == 0:
		return nil, fmt.Errorf("%s frame at byte %d: %w: cut short, and the tail doesn't hold its events", zstName, end, store.ErrCorrupt)
	}
	return kept, nil
}
