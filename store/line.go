package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lnk-dev/link/internal/jsonx"
)

// MaxLine bounds one event's line, so a corrupt file can't make a reader
// hold an unbounded line. A tool's answer is kept to 32 KiB and a message's
// attachments to what a bridge sends; 64 MiB leaves room for both.
const MaxLine = 64 << 20

// MarshalLine encodes e as one line of JSON, ending in a newline: the form
// of an event in the log's file and inside compact's frames. A large text or
// attachment is copied once, into the line of exactly its length
// (jsonx.Holes), not into buffers grown by doubling.
func MarshalLine(e Event) ([]byte, error) {
	b, h, err := heldLine(e)
	if err != nil {
		return nil, err
	}
	return h.Fill(b, "\n"), nil
}

// LineBody is MarshalLine's line as a reader, for a driver that writes it
// out without holding it whole: its length, and open, a reader of it from
// its start (again at each call) that quotes each large text as it is
// read (jsonx.Holes.Body), so an event of many megabytes costs no copy of
// its text.
func LineBody(e Event) (size int64, open func() io.Reader, err error) {
	b, h, err := heldLine(e)
	if err != nil {
		return 0, nil, err
	}
	size, open = h.Body(append(b, '\n'))
	return size, open, nil
}

// heldLine is e marshaled with its large strings held aside by h.
func heldLine(e Event) ([]byte, *jsonx.Holes, error) {
	h := new(jsonx.Holes)
	e.Text = h.Hold(e.Text)
	if len(e.Parts) > 0 {
		parts := make([]Part, len(e.Parts))
		for i, p := range e.Parts {
			p.Data, p.Text = h.Hold(p.Data), h.Hold(p.Text)
			parts[i] = p
		}
		e.Parts = parts
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, nil, fmt.Errorf("encode event %d: %w", e.Seq, err)
	}
	return b, h, nil
}

// ParseLine decodes one line (its newline optional) as an event. A line
// that isn't an event is ErrCorrupt; the caller adds the file and place.
func ParseLine(line []byte) (Event, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) > MaxLine {
		return Event{}, fmt.Errorf("%w: line of %d bytes is over %d", ErrCorrupt, len(line), MaxLine)
	}
	// Unmarshal refuses anything after the one value, so a line holding
	// two is corrupt too.
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if e.Seq < 1 {
		return Event{}, fmt.Errorf("%w: sequence number %d is not positive", ErrCorrupt, e.Seq)
	}
	if e.Kind == "" {
		return Event{}, fmt.Errorf("%w: event %d has no kind", ErrCorrupt, e.Seq)
	}
	return e, nil
}
