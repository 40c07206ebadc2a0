package sse

import (
	"bytes"

	"github.com/lnk-dev/link/model"
)

// Ready says whether Next would return an event without reading from the
// stream: an event with data is buffered whole, up to its blank line.
// A stream's events come in bursts (a provider writes several at once,
// and a slow reader finds them waiting): Burst uses it to say More.
func (s *Reader) Ready() bool {
	if s.err != nil {
		return false
	}
	buf, _ := s.r.Peek(s.r.Buffered())
	data := false
	for len(buf) > 0 {
		end := bytes.IndexByte(buf, '\n')
		if end < 0 {
			return false // a line not whole yet
		}
		line := bytes.TrimSuffix(buf[:end], []byte("\r"))
		buf = buf[end+1:]
		switch {
		case len(line) == 0 && data:
			return true
		case bytes.HasPrefix(line, []byte("data")) && (len(line) == 4 || line[4] == ':'):
			data = true
		}
	}
	return false
}

// Burst hands a provider's deltas on, each saying More (model.Delta.More)
// when the next is known to come without waiting on the network: a delta
// is held until the next one comes (then it goes with More), or until the
// stream has no whole event buffered (Wait, called before each read: it
// goes without More), or the stream's end (Flush). No delta waits for
// the network to be handed on.
type Burst struct {
	on   func(model.Delta) error
	held model.Delta
	has  bool
}

// NewBurst hands deltas on to onDelta.
func NewBurst(onDelta func(model.Delta) error) *Burst { return &Burst{on: onDelta} }

// Add hands on the delta held, saying More, and holds d.
func (b *Burst) Add(d model.Delta) error {
	if err := b.hand(true); err != nil {
		return err
	}
	b.held, b.has = d, true
	return nil
}

// Wait hands on the delta held, not saying More, unless events has a
// whole event buffered: call it before each read of the stream.
func (b *Burst) Wait(events *Reader) error {
	if !b.has || events.Ready() {
		return nil
	}
	return b.hand(false)
}

// Flush hands on the delta held, not saying More: at the stream's end.
func (b *Burst) Flush() error { return b.hand(false) }

// Next reads events' next event, first handing on the delta held when
// the read may wait (Wait): false at the stream's end or an error
// (events.Err), or onDelta's error.
func (b *Burst) Next(events *Reader) (bool, error) {
	if err := b.Wait(events); err != nil {
		return false, err
	}
	return events.Next(), nil
}

// FlushFailed hands on the delta held when *err, the stream's, is set:
// what was read before a failure still goes. Deferred by a provider's
// Stream.
func (b *Burst) FlushFailed(err *error) {
	if *err != nil {
		b.Flush()
	}
}

func (b *Burst) hand(more bool) error {
	if !b.has {
		return nil
	}
	d := b.held
	b.held, b.has = model.Delta{}, false
	d.More = more
	return b.on(d)
}
