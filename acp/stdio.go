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
	skip   func(prefix []byte)
}

// SkipLong makes a line longer than the limit skipped, not the reading's
// end: the rest of it is read and dropped, f is given its first bytes (at
// most 4 KiB, to say whose it was), and reading goes on with the next
// line. Call it before the first read.
func (s *Stdio) SkipLong(f func(prefix []byte)) { s.skip = f }

// skipPrefix bounds the bytes of a skipped line handed to SkipLong's func.
const skipPrefix = 4 << 10

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
		line, ended, err := s.readLine()
		if errors.Is(err, ErrTooLong) {
			if s.skip == nil {
				return nil, err
			}
			if err := s.skipLine(line, ended); err != nil {
				return nil, err
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return bytes.TrimRight(line, "\r"), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// skipLine reads past the rest of a line longer than the limit (none
// when its end was already read), and hands its first bytes to the skip
// func.
func (s *Stdio) skipLine(prefix []byte, ended bool) error {
	for !ended {
		_, err := s.r.ReadSlice('\n')
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("read line: %w", err)
		}
	}
	s.skip(prefix)
	return nil
}

// readLine reads up to and without the next '\n', or to the end of the
// input: an error only when nothing more is left. A line past the limit
// is ErrTooLong, with its first bytes (up to 4 KiB) and whether its end
// was read.
func (s *Stdio) readLine() (line []byte, ended bool, err error) {
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > s.limit+1 {
			head := append(line, chunk...)
			if len(head) > skipPrefix {
				head = head[:skipPrefix]
			}
			return head, err == nil, fmt.Errorf("read line: %w (%d bytes)", ErrTooLong, s.limit)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) > 0 {
				return line, true, nil
			}
			return nil, true, io.EOF
		default:
			return nil, false, fmt.Errorf("read line: %w", err)
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
	if len(msg) >= writeApart {
		// Not copied to add its line break: a reader takes the line as
		// it comes, in one write or two.
		if _, err := s.w.Write(msg); err != nil {
			return fmt.Errorf("write line: %w", err)
		}
		if _, err := s.w.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("write line: %w", err)
		}
		return nil
	}
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("write line: %w", err)
	}
	return nil
}

// writeParts writes a message given as parts (Message.encodeParts), a
// line break after them, each part as it is: a reader takes the line as
// it comes, in one write or several.
func (s *Stdio) writeParts(parts [][]byte) error {
	for _, p := range append(parts, []byte{'\n'}) {
		if _, err := s.w.Write(p); err != nil {
			return fmt.Errorf("write line: %w", err)
		}
	}
	return nil
}

// writeApart is the size from which a message is written, then its line
// break, rather than copied first to write them at once.
const writeApart = 64 << 10

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
