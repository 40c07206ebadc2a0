package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Stdio frames messages as lines, one JSON message to a line, as ACP
// agents speak on their standard input and output. A line longer than the
// limit ends the reading with ErrTooLong.
type Stdio struct {
	r      *bufio.Reader
	w      io.Writer
	limit  int
	closer []io.Closer
	once   sync.Once
}

// NewStdio frames messages read from r and written to w, each line at
// most limit bytes (MaxMessage when limit <= 0). Close closes r and w
// when they are io.Closers.
func NewStdio(r io.Reader, w io.Writer, limit int) *Stdio {
	if limit <= 0 {
		limit = MaxMessage
	}
	s := &Stdio{r: bufio.NewReaderSize(r, 64<<10), w: w, limit: limit}
	for _, x := range []any{r, w} {
		if c, ok := x.(io.Closer); ok {
			s.closer = append(s.closer, c)
		}
	}
	return s
}

// ReadMessage returns the next non-blank line, without its line break:
// io.EOF at the end of the input. A read already under way is not
// interrupted by ctx; Close ends it.
func (s *Stdio) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := s.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			return bytes.TrimRight(line, "\r"), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads up to and without the next '\n', or to the end of the
// input: an error only when nothing more is left.
func (s *Stdio) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > s.limit+1 {
			return nil, fmt.Errorf("read line: %w (%d bytes)", ErrTooLong, s.limit)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) > 0 {
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("read line: %w", err)
		}
	}
}

// WriteMessage writes msg and a line break. A message holding line breaks
// (whitespace between JSON tokens) is compacted first.
func (s *Stdio) WriteMessage(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if bytes.ContainsAny(msg, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, msg); err != nil {
			return fmt.Errorf("write line: a message with a line break is JSON: %w", err)
		}
		msg = b.Bytes()
	}
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("write line: %w", err)
	}
	return nil
}

// Close closes the reader and writer given, once.
func (s *Stdio) Close() error {
	var errs []error
	s.once.Do(func() {
		for _, c := range s.closer {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	})
	return errors.Join(errs...)
}
