package background

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/fsx"
)

// segments is how many output files a command's kept output is split
// into: the oldest is removed as a new one begins, so at least
// (segments-1)/segments of KeepOutput, the latest, is always there.
const segments = 4

// segment is one output file: out.<offset>, holding the bytes from
// offset on.
type segment struct {
	start int64
	size  int64
	name  string
}

// listSegments lists dir's output files, oldest first.
func listSegments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), outFile)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		start, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || start < 0 {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed as it was listed
		}
		segs = append(segs, segment{start: start, size: info.Size(), name: filepath.Join(dir, e.Name())})
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].start < segs[j].start })
	return segs, nil
}

// outputWriter writes a command's output to its folder's segments,
// keeping the latest keep bytes or so: the supervisor's.
type outputWriter struct {
	dir   string
	keep  int64
	f     *os.File
	start int64 // the current segment's first offset
	n     int64 // bytes written in all
}

// Write appends b, beginning a new segment (and removing the oldest past
// segments) when the current one is full.
func (w *outputWriter) Write(b []byte) (int, error) {
	per := max(w.keep/segments, 1)
	written := 0
	for len(b) > 0 {
		if w.f == nil || w.n-w.start >= per {
			if err := w.next(); err != nil {
				return written, err
			}
		}
		chunk := b[:min(int64(len(b)), per-(w.n-w.start))]
		k, err := w.f.Write(chunk)
		w.n += int64(k)
		written += k
		if err != nil {
			return written, err
		}
		b = b[k:]
	}
	return written, nil
}

// next closes the current segment and begins one at the offset written
// so far, removing all but the latest segments.
func (w *outputWriter) next() error {
	if w.f != nil {
		w.f.Close()
	}
	w.start = w.n
	f, err := fsx.Open(filepath.Join(w.dir, outFile+strconv.FormatInt(w.n, 10)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		w.f = nil
		return err
	}
	w.f = f
	segs, err := listSegments(w.dir)
	if err != nil {
		return err
	}
	for len(segs) > segments {
		os.Remove(segs[0].name)
		segs = segs[1:]
	}
	return nil
}

// Close closes the current segment.
func (w *outputWriter) Close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

// Output is a part of a command's output, as run__read answers it.
type Output struct {
	Text    string // the bytes read, invalid UTF-8 as U+FFFD
	From    int64  // the offset Text begins at
	Next    int64  // the offset to read from next
	Total   int64  // bytes of output so far, kept or not
	Dropped int64  // bytes before From that are no longer kept, from the offset asked
}

// ErrOffset is the refusal of an offset past the output's end.
var ErrOffset = errors.New("offset past the output's end")

// readOutput reads at most limit bytes of dir's output from offset on;
// an offset older than what is kept reads from the oldest kept, saying
// how much was dropped. A read ends before a character cut in two (the
// next read begins with it), unless that is all there is to read.
func readOutput(dir string, offset int64, limit int) (Output, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return Output{}, err
	}
	var total int64
	if len(segs) > 0 {
		last := segs[len(segs)-1]
		total = last.start + last.size
	}
	if offset < 0 || offset > total {
		return Output{}, fmt.Errorf("%w: offset %d, %d bytes of output so far", ErrOffset, offset, total)
	}
	out := Output{From: offset, Total: total}
	if len(segs) > 0 && offset < segs[0].start {
		out.Dropped = segs[0].start - offset
		out.From = segs[0].start
	}
	buf := make([]byte, 0, min(int64(limit), total-out.From))
	pos := out.From
	for _, s := range segs {
		if len(buf) == cap(buf) {
			break
		}
		if pos >= s.start+s.size || pos < s.start {
			continue
		}
		n, err := readAt(s.name, pos-s.start, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		pos += int64(n)
		if err != nil {
			return Output{}, err
		}
	}
	if cut := incompleteTail(buf); cut > 0 && cut < len(buf) {
		buf = buf[:len(buf)-cut]
	}
	out.Next = out.From + int64(len(buf))
	out.Text = strings.ToValidUTF8(string(buf), "\uFFFD")
	return out, nil
}

// readAt reads into b from name at off, as much as there is.
func readAt(name string, off int64, b []byte) (int, error) {
	f, err := fsx.Open(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // removed as a newer segment began: read past it
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// incompleteTail is how many bytes at b's end begin a character not
// whole in b.
func incompleteTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}
