package compact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/store"
)

// The zstd format's numbers the walker needs
// (RFC 8878, https://www.rfc-editor.org/rfc/rfc8878).
const (
	skippableMagic = 0x184D2A50 // through 0x184D2A5F: a frame every decoder skips
	maxBlock       = 128 << 10  // Block_Maximum_Size: no block is larger
	checksumSize   = 4
	blockHeader    = 3
	// frameHeaderMax is the longest frame header: magic, descriptor,
	// window, dictionary id and content size.
	frameHeaderMax = 4 + 1 + 1 + 4 + 8
)

// errCut says a frame runs past the end of the file: a writer stopped
// while appending it. It is not read; the next writer cuts it off.
var errCut = errors.New("frame cut short")

// frame is one frame of events.zst: the bytes [off, end).
type frame struct {
	off, end  int64
	skippable bool
}

// nextFrame finds the frame starting at off in the first size bytes of r,
// without decompressing it: it reads the frame's header and each block's,
// and steps over the blocks. A frame that runs past size is errCut; bytes
// that aren't a frame are ErrCorrupt.
func nextFrame(r io.ReaderAt, off, size int64) (frame, error) {
	f := frame{off: off}
	hb := make([]byte, min(frameHeaderMax, size-off))
	if err := readAt(r, hb, off); err != nil {
		return f, err
	}
	var h zstd.Header
	if err := h.Decode(hb); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return f, errCut
		}
		return f, fmt.Errorf("%w: %v", store.ErrCorrupt, err)
	}
	if h.Skippable {
		f.skippable = true
		f.end = off + int64(h.HeaderSize) + int64(h.SkippableSize)
		if f.end > size {
			return f, errCut
		}
		return f, nil
	}
	pos := off + int64(h.HeaderSize)
	var bh [blockHeader]byte
	for {
		if pos+blockHeader > size {
			return f, errCut
		}
		if err := readAt(r, bh[:], pos); err != nil {
			return f, err
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last, kind, n := v&1 != 0, (v>>1)&3, int64(v>>3)
		if n > maxBlock {
			return f, fmt.Errorf("%w: block at byte %d holds %d bytes, over %d", store.ErrCorrupt, pos, n, maxBlock)
		}
		switch kind {
		case 1: // RLE: one byte, repeated
			n = 1
		case 3:
			return f, fmt.Errorf("%w: block at byte %d is of the reserved type", store.ErrCorrupt, pos)
		}
		pos += blockHeader + n
		if pos > size {
			return f, errCut
		}
		if last {
			break
		}
	}
	if h.HasCheckSum {
		pos += checksumSize
		if pos > size {
			return f, errCut
		}
	}
	f.end = pos
	return f, nil
}

// walk calls fn with each whole frame of r's first size bytes from off,
// in order. It returns where the last whole frame ends, and whether a
// frame cut short follows it there. Bytes that aren't a frame are
// ErrCorrupt, the error naming their offset.
func walk(r io.ReaderAt, off, size int64, fn func(frame) error) (end int64, cut bool, err error) {
	for off < size {
		f, err := nextFrame(r, off, size)
		if errors.Is(err, errCut) {
			return off, true, nil
		}
		if err != nil {
			return off, false, fmt.Errorf("frame at byte %d: %w", off, err)
		}
		if err := fn(f); err != nil {
			return off, false, err
		}
		off = f.end
	}
	return off, false, nil
}

// readAt reads exactly len(b) bytes of r at off.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// frameLine is one event's line in a frame, its number read but not yet
// the rest of it.
type frameLine struct {
	seq   int64
	line  []byte
	frame int64 // where its frame starts
	n     int   // its line number in the frame, from 1
}

// event parses the line whole.
func (l frameLine) event() (store.Event, error) {
	e, err := store.ParseLine(l.line)
	if err == nil && e.Seq != l.seq {
		err = fmt.Errorf("%w: two numbers, %d and %d", store.ErrCorrupt, l.seq, e.Seq)
	}
	if err != nil {
		return store.Event{}, fmt.Errorf("frame at byte %d, line %d: %w", l.frame, l.n, err)
	}
	return e, nil
}

// seqPrefix starts every line store.MarshalLine writes.
var seqPrefix = []byte(`{"seq":`)

// lineSeq reads the number of an event's line: at once from a line that
// starts with it, as MarshalLine writes them, else by parsing the line.
func lineSeq(line []byte) (int64, error) {
	if rest, ok := bytes.CutPrefix(line, seqPrefix); ok {
		var seq int64
		i := 0
		for ; i < len(rest) && i < 18 && rest[i] >= '0' && rest[i] <= '9'; i++ {
			seq = seq*10 + int64(rest[i]-'0')
		}
		if i > 0 && i < len(rest) && rest[i] == ',' && rest[0] != '0' {
			return seq, nil
		}
	}
	e, err := store.ParseLine(line)
	return e.Seq, err
}

// frameLines decodes one whole frame of events (data, at off in its file)
// whose first event follows prev (or any, with prev -1): its lines, each
// an event numbered on from the one before. A frame that doesn't decode
// (its checksum included), or whose lines aren't so numbered, is
// ErrCorrupt. The lines are parsed whole only as they are read (event).
func (d *Driver) frameLines(data []byte, off, prev int64) ([]frameLine, error) {
	dec, err := d.decoder()
	if err != nil {
		return nil, err
	}
	content, err := dec.DecodeAll(data, nil)
	if err != nil {
		// DecodeAll may give what it decoded with the error: none of it is read.
		return nil, fmt.Errorf("frame at byte %d: %w: %v", off, store.ErrCorrupt, err)
	}
	if len(content) == 0 || content[len(content)-1] != '\n' {
		return nil, fmt.Errorf("frame at byte %d: %w: its events don't end in a newline", off, store.ErrCorrupt)
	}
	lines := make([]frameLine, 0, bytes.Count(content, []byte{'\n'}))
	for n := 1; len(content) > 0; n++ {
		i := bytes.IndexByte(content, '\n')
		l := frameLine{line: content[:i+1], frame: off, n: n}
		content = content[i+1:]
		if l.seq, err = lineSeq(l.line); err != nil {
			return nil, fmt.Errorf("frame at byte %d, line %d: %w", off, n, err)
		}
		if prev >= 0 && l.seq != prev+1 {
			return nil, fmt.Errorf("frame at byte %d, line %d: %w: event %d follows %d", off, n, store.ErrCorrupt, l.seq, prev)
		}
		lines = append(lines, l)
		prev = l.seq
	}
	return lines, nil
}

// framed is what events.zst holds.
type framed struct {
	lines []frameLine // every whole frame's, in order
	end   int64       // where the last whole frame ends
	cut   bool        // a frame cut short follows end
}

// last is the number of the last event the frames hold, 0 for none.
func (f framed) last() int64 {
	if len(f.lines) == 0 {
		return 0
	}
	return f.lines[len(f.lines)-1].seq
}

// events parses the frames' events from the i-th on.
func (f framed) events(i int) ([]store.Event, error) {
	es := make([]store.Event, 0, len(f.lines)-i)
	for _, l := range f.lines[i:] {
		e, err := l.event()
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

// readFrames reads every whole frame of data, the bytes of an events.zst,
// skipping skippable ones. A frame cut short at the end is not read.
func (d *Driver) readFrames(data []byte) (framed, error) {
	var out framed
	end, cut, err := walk(bytes.NewReader(data), 0, int64(len(data)), func(f frame) error {
		if f.skippable {
			return nil
		}
		ls, err := d.frameLines(data[f.off:f.end], f.off, out.last())
		out.lines = append(out.lines, ls...)
		return err
	})
	out.end, out.cut = end, cut
	return out, err
}

// skippableFrame is a frame every zstd decoder skips, holding payload.
func skippableFrame(payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, skippableMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}
