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

// frameEvents decodes one whole frame of events (data, at off in its file)
// whose first event follows prev (or any, with prev -1): each line of it
// an event, numbered on from the one before. A frame that doesn't decode, or whose lines aren't such
// events, is ErrCorrupt.
func (d *Driver) frameEvents(data []byte, off, prev int64) ([]store.Event, error) {
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
	events := make([]store.Event, 0, bytes.Count(content, []byte{'\n'}))
	for n := 1; len(content) > 0; n++ {
		i := bytes.IndexByte(content, '\n')
		e, err := store.ParseLine(content[:i+1])
		if err != nil {
			return nil, fmt.Errorf("frame at byte %d, line %d: %w", off, n, err)
		}
		if prev >= 0 && e.Seq != prev+1 {
			return nil, fmt.Errorf("frame at byte %d, line %d: %w: event %d follows %d", off, n, store.ErrCorrupt, e.Seq, prev)
		}
		events = append(events, e)
		prev = e.Seq
		content = content[i+1:]
	}
	return events, nil
}

// framed is what events.zst holds.
type framed struct {
	events []store.Event // every whole frame's, in order
	end    int64         // where the last whole frame ends
	cut    bool          // a frame cut short follows end
}

// last is the number of the last event the frames hold, 0 for none.
func (f framed) last() int64 {
	if len(f.events) == 0 {
		return 0
	}
	return f.events[len(f.events)-1].Seq
}

// readFrames reads every whole frame of data, the bytes of an events.zst,
// skipping skippable ones. A frame cut short at the end is not read.
func (d *Driver) readFrames(data []byte) (framed, error) {
	var out framed
	end, cut, err := walk(bytes.NewReader(data), 0, int64(len(data)), func(f frame) error {
		if f.skippable {
			return nil
		}
		es, err := d.frameEvents(data[f.off:f.end], f.off, out.last())
		out.events = append(out.events, es...)
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
