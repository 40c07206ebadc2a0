// Package sse is what the providers (model/anthropic, model/openai) share
// of the wire: a streamed answer's Server-Sent Events read one at a time
// (Reader), and a JSON request sent with the retries its caller asked for
// (Post), as the providers' SDKs did before Link spoke the two APIs
// itself, so lnk-link-harness links no SDK (docs/decisions/038-idle-memory.md).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEvent is the most one event may hold, its lines together: a provider
// streams an answer in small events, so a larger one is a broken stream.
const MaxEvent = 16 << 20

// ErrTooLarge is a stream's error when an event is longer than MaxEvent.
var ErrTooLarge = errors.New("sse: an event longer than 16 MiB")

// Event is one event of a stream: its type (the event: line, "" when it
// had none) and its data (its data: lines, each followed by "\n").
type Event struct {
	Type string
	Data []byte
}

// Reader reads a stream's events in order, as the spec of Server-Sent
// Events dispatches them: at each blank line, an event with data; a line
// starting with ':' is a comment; a field's value loses one leading
// space; other fields (id, retry) are passed over.
type Reader struct {
	r   *bufio.Reader
	ev  Event
	err error
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10)}
}

// Next reads the next event, false at the stream's end or an error (Err).
// The event's Data is valid until the next call.
func (s *Reader) Next() bool {
	if s.err != nil {
		return false
	}
	typ := ""
	data := s.ev.Data[:0]
	for {
		line, err := s.line()
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			// A stream cut after an event's last line dispatches nothing.
			return false
		}
		if len(line) == 0 {
			if len(data) == 0 {
				typ = ""
				continue
			}
			s.ev = Event{Type: typ, Data: data}
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			if len(data)+len(value)+1 > MaxEvent {
				s.err = ErrTooLarge
				return false
			}
			data = append(data, value...)
			data = append(data, '\n')
		}
	}
}

// line reads one line without its end (\n, \r\n or a lone \r before
// \n), bounded by MaxEvent; the slice is valid until the next read.
func (s *Reader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(long) > MaxEvent {
				return nil, ErrTooLarge
			}
			line, err = s.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// Event is the event Next read.
func (s *Reader) Event() Event { return s.ev }

// Err is what ended the stream early, nil at its end.
func (s *Reader) Err() error {
	if s.err != nil {
		return fmt.Errorf("read the stream: %w", s.err)
	}
	return nil
}
