package log

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/lnk-dev/link/store"
)

// block is how much a backwards read takes from the file at a time: a
// turn's latest 32 events of a chat fit in one.
const block = 64 << 10

// smallBlock is the first read of one that wants the last line or two (an
// append's number, a read from a recent number): most lines fit, and a
// longer one doubles it until it does.
const smallBlock = 4 << 10

// tail is the end of a log as one read found it: where its complete
// lines end, and the bytes read just before that, the first window of a
// backwards read (backwardsFrom), so the turn's read of its last lines
// reads them once. What's after end is a final line a writer didn't
// finish, never acknowledged, which no reader reads and the next writer
// cuts off.
type tail struct {
	end    int64
	win    []byte  // the file's bytes [end-len(win), end); nil for none read
	pooled *[]byte // win's buffer, from firstBlocks, given back by release
}

// release gives t's buffer back; its window is not used after.
func (t *tail) release() {
	if t.pooled != nil {
		firstBlocks.Put(t.pooled)
		t.pooled, t.win = nil, nil
	}
}

// readTail reads the last first bytes of r's first size bytes, in one
// read, and finds in them where the complete lines end: nearly always the
// file ends with its last line's newline. A final line longer than first
// bytes without one has its start looked for further back, a block at a
// time, and no window is kept.
func readTail(r io.ReaderAt, size, first int64) (tail, error) {
	if size == 0 {
		return tail{}, nil
	}
	n := min(first, size)
	var t tail
	var b []byte
	if n <= smallBlock {
		t.pooled = firstBlocks.Get().(*[]byte)
		b = (*t.pooled)[:n]
	} else {
		b = make([]byte, n)
	}
	if _, err := r.ReadAt(b, size-n); err != nil {
		t.release()
		return tail{}, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		t.end, t.win = size-n+int64(i)+1, b[:i+1]
		return t, nil
	}
	t.release()
	end, err := lastNewline(r, size-n, size)
	return tail{end: end}, err
}

// holdsLastLine says whether t's window holds the whole of the last
// line: a newline before the one that ends it, or the file's start.
func (t tail) holdsLastLine() bool {
	n := int64(len(t.win))
	return n > 0 && (n == t.end || bytes.LastIndexByte(t.win[:n-1], '\n') >= 0)
}

// lastNewline is the offset just past the last newline of r before pos,
// or 0; size is where the file ends, for the bound of its final line.
func lastNewline(r io.ReaderAt, pos, size int64) (int64, error) {
	buf := make([]byte, block)
	for pos > 0 {
		n := min(int64(len(buf)), pos)
		pos -= n
		b := buf[:n]
		if _, err := r.ReadAt(b, pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		if size-pos > store.MaxLine+1 {
			// A final line this long is no event's; reading on would read
			// the whole file for nothing.
			return 0, fmt.Errorf("%w: final line at byte %d is over %d bytes", store.ErrCorrupt, pos, store.MaxLine)
		}
	}
	return 0, nil
}

// backwards calls fn with each complete line of r ending at or before
// end (an offset just past a newline, or 0), last first: the line without
// its newline, and the offset it starts at. It stops when fn says so, at
// the start of the file, or at an error. A line is read once, and only
// the blocks that hold the lines fn takes are read.
func backwards(r io.ReaderAt, end int64, fn func(line []byte, off int64) (more bool, err error)) error {
	return backwardsFrom(r, tail{end: end}, block, fn)
}

// backwardsFrom is backwards from t's end, beginning with the bytes t
// read (its window), its reads before them doubling from size: the first
// of size bytes when t read none, else twice the size t read with.
//
// fn's line is only for the call: its bytes are used again after
// backwardsFrom returns (the first block, up to smallBlock, is pooled).
func backwardsFrom(r io.ReaderAt, t tail, size int64, fn func(line []byte, off int64) (more bool, err error)) error {
	// win holds the file's bytes [start, start+len(win)); the line being
	// found ends at le, just past its newline.
	win := t.win
	if win != nil {
		size *= 2
	}
	var pooled *[]byte // the first block, given back at the end
	defer func() {
		if pooled != nil {
			firstBlocks.Put(pooled)
		}
	}()
	start, le := t.end-int64(len(win)), t.end
	for le > 0 {
		// The newline that ends the line before this one.
		i := -1
		if le > start {
			i = bytes.LastIndexByte(win[:le-1-start], '\n')
		}
		if i < 0 && start > 0 {
			if le-start > store.MaxLine+1 {
				return fmt.Errorf("%w: line ending at byte %d is over %d bytes", store.ErrCorrupt, le, store.MaxLine)
			}
			// Read the block before the window, twice as large each time
			// one line needs more, and keep only what's left to read; a
			// line already past longLine is read at once from its start,
			// found first, so it is held in one slice of its length, not
			// copied through windows grown by doubling.
			if le-start >= longLine {
				ls, err := lineStart(r, start, le)
				if err != nil {
					return err
				}
				if ls < start {
					next := make([]byte, le-ls)
					if _, err := r.ReadAt(next[:start-ls], ls); err != nil {
						return err
					}
					copy(next[start-ls:], win[:le-start])
					win, start = next, ls
				}
				more, err := fn(win[:le-1-start], start)
				if err != nil || !more {
					return err
				}
				le = start
				continue
			}
			n := min(size, start)
			size *= 2
			var next []byte
			if win == nil && n <= smallBlock {
				pooled = firstBlocks.Get().(*[]byte)
				next = (*pooled)[:n]
			} else {
				next = make([]byte, n+le-start)
			}
			if _, err := r.ReadAt(next[:n], start-n); err != nil {
				return err
			}
			copy(next[n:], win[:le-start])
			win, start = next, start-n
			continue
		}
		ls := start + int64(i) + 1 // 0 when i is -1 and the window starts the file
		more, err := fn(win[ls-start:le-1-start], ls)
		if err != nil || !more {
			return err
		}
		le = ls
	}
	return nil
}

// firstBlocks are the first blocks backwardsFrom reads, of smallBlock
// bytes: a turn's reads and appends read one each.
var firstBlocks = sync.Pool{New: func() any { b := make([]byte, smallBlock); return &b }}

// longLine is the part of a line read backwards past which the rest of
// it is read at once (backwardsFrom).
var longLine int64 = 1 << 20

// lineStart is where the line of r holding the byte before pos starts:
// just past the newline before pos, or 0. It reads a block at a time,
// backwards, holding none of the line; le is where the line ends, for
// its bound.
func lineStart(r io.ReaderAt, pos, le int64) (int64, error) {
	buf := make([]byte, block)
	for pos > 0 {
		n := min(int64(len(buf)), pos)
		b := buf[:n]
		if _, err := r.ReadAt(b, pos-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
		if le-pos > store.MaxLine+1 {
			return 0, fmt.Errorf("%w: line ending at byte %d is over %d bytes", store.ErrCorrupt, le, store.MaxLine)
		}
	}
	return 0, nil
}

// longLineSeq reads the number of the line of r ending at end (just past
// its newline) when that line is longer than a block and starts as
// MarshalLine writes an event, {"seq":N, (ok); it reads a block at a
// time, backwards, to find the line's start, holding none of the line.
func longLineSeq(r io.ReaderAt, end int64) (seq int64, ok bool, err error) {
	if end <= block {
		return 0, false, nil
	}
	buf := make([]byte, block)
	pos := end - 1 // the line's newline
	start := int64(0)
	for pos > 0 {
		n := min(int64(len(buf)), pos)
		b := buf[:n]
		if _, err := r.ReadAt(b, pos-n); err != nil {
			return 0, false, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			start = pos - n + int64(i) + 1
			break
		}
		pos -= n
		if end-pos > store.MaxLine+1 {
			return 0, false, fmt.Errorf("%w: line ending at byte %d is over %d bytes", store.ErrCorrupt, end, store.MaxLine)
		}
	}
	if end-start <= block {
		return 0, false, nil
	}
	head := buf[:32]
	if _, err := r.ReadAt(head, start); err != nil {
		return 0, false, err
	}
	seq, ok = seqPrefix(head)
	return seq, ok, nil
}

// seqPrefix reads the number of an event's line from its start, as
// MarshalLine writes it, {"seq":N, (ok), without parsing the rest.
func seqPrefix(line []byte) (int64, bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !found {
		return 0, false
	}
	digits, _, found := bytes.Cut(rest[:min(len(rest), 20)], []byte{','})
	if !found {
		return 0, false
	}
	seq, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil || seq < 1 {
		return 0, false
	}
	return seq, true
}

// lastLines reads the complete lines of r before t's end, last first,
// parsing each, until stop says it has what it needs; first is the size t
// was read with (backwardsFrom). Numbers must run down by one from each
// line to the one before it; a line out of order is corrupt. path names
// the file in errors.
func lastLines(r io.ReaderAt, t tail, first int64, path string, stop func(e store.Event) bool) ([]store.Event, error) {
	return lastLinesFrom(r, t, first, path, 0, stop)
}

// lastLinesFrom is lastLines for the events numbered from and after: the
// line before them (their number read from its start, seqPrefix) ends the
// read unparsed, unless it doesn't start as MarshalLine writes.
func lastLinesFrom(r io.ReaderAt, t tail, first int64, path string, from int64, stop func(e store.Event) bool) ([]store.Event, error) {
	var (
		es      []store.Event
		stopped bool
	)
	err := backwardsFrom(r, t, first, func(line []byte, off int64) (bool, error) {
		if seq, ok := seqPrefix(line); ok && seq < from {
			if len(es) > 0 && seq != es[len(es)-1].Seq-1 {
				return false, fmt.Errorf("%s at byte %d: %w: event %d before event %d", path, off, store.ErrCorrupt, seq, es[len(es)-1].Seq)
			}
			stopped = true
			return false, nil
		}
		e, err := store.ParseLine(line)
		if err != nil {
			return false, fmt.Errorf("%s at byte %d: %w", path, off, err)
		}
		if len(es) > 0 && e.Seq != es[len(es)-1].Seq-1 {
			return false, fmt.Errorf("%s at byte %d: %w: event %d before event %d", path, off, store.ErrCorrupt, e.Seq, es[len(es)-1].Seq)
		}
		es = append(es, e)
		stopped = stop(e)
		return !stopped, nil
	})
	if err != nil {
		if !errors.Is(err, store.ErrCorrupt) {
			err = fmt.Errorf("read %s: %w", path, err)
		}
		return nil, err
	}
	if !stopped && len(es) > 0 && es[len(es)-1].Seq != 1 {
		// The file's first line is not event 1.
		return nil, fmt.Errorf("%s at byte 0: %w: first event is %d", path, store.ErrCorrupt, es[len(es)-1].Seq)
	}
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es, nil
}

// scan reads the complete lines of r from its start, in order, returning
// the events numbered from and after. Event k must be line k; a line that
// isn't, or isn't an event, is corrupt, named by its line number and byte
// offset. A final line without its newline is not read.
func scan(r io.Reader, path string, from int64) ([]store.Event, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, block), store.MaxLine+1)
	s.Split(splitLines)
	var (
		es  []store.Event
		off int64
		n   int64
	)
	for s.Scan() {
		line := s.Bytes()
		if line[len(line)-1] != '\n' {
			break // unfinished, never acknowledged
		}
		n++
		e, err := store.ParseLine(line)
		if err == nil && e.Seq != n {
			err = fmt.Errorf("%w: event %d on line %d", store.ErrCorrupt, e.Seq, n)
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d (byte %d): %w", path, n, off, err)
		}
		if e.Seq >= from {
			es = append(es, e)
		}
		off += int64(len(line))
	}
	if err := s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s line %d (byte %d): %w: line over %d bytes", path, n+1, off, store.ErrCorrupt, store.MaxLine)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return es, nil
}

// splitLines is a bufio.SplitFunc giving each line with its newline, and
// a final line without one as it is, so the caller can tell it unfinished.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
