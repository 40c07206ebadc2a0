package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"unicode/utf8"
)

// Read's bounds.
const (
	// DefaultLines is how many lines a read gives unless it says.
	DefaultLines = 500
	// MaxLines is the most lines one read gives.
	MaxLines = 2000
	// MaxReadBytes is the most bytes of text one read gives.
	MaxReadBytes = 64 << 10
	// MaxLineBytes is the most bytes of one line given; the rest of a
	// longer line is cut, said.
	MaxLineBytes = 2000
	// MaxScan is the most bytes a read looks through: to its first line,
	// and after its last to count the file's lines. Past it, a read
	// says the lines go on, unnumbered, and a first line beyond it is
	// refused: a 1 GB file is answered as fast as a small one.
	MaxScan = 64 << 20
	// countScan is the most bytes a read looks through after its last
	// line to count the file's lines.
	countScan = 8 << 20
	// sniff is how much of a file's start says whether it is text.
	sniff = 8 << 10
)

// Lines is what a read gives: lines From to From+len(Text)-1 of a file.
type Lines struct {
	Path    string
	From    int
	Text    []string
	Clipped int   // how many of Text were cut at MaxLineBytes
	Cut     bool  // the read stopped at MaxReadBytes, before the lines asked
	Size    int64 // the file's bytes
	Total   int   // the file's lines, or -1 when not counted (past MaxScan)
	CRLF    bool  // its lines end in "\r\n" (not shown in Text)
	Binary  bool  // not UTF-8 text: nothing of it is given
	Scanned int64 // the bytes looked through
}

// Read reads lines of the file p: from line from (1 is the first; 0 is
// 1), n of them (0 is DefaultLines; at most MaxLines and MaxReadBytes).
// A binary file is said so (Binary), none of it given.
func (w *Workspace) Read(ctx context.Context, p string, from, n int) (Lines, error) {
	var l Lines
	err := w.box.run(func() (err error) {
		l, err = w.read(ctx, p, from, n)
		return err
	})
	return l, err
}

func (w *Workspace) read(ctx context.Context, p string, from, n int) (Lines, error) {
	name, err := CheckPath(p)
	if err != nil {
		return Lines{}, err
	}
	switch {
	case from < 0:
		return Lines{}, refuse("from is a line number, 1 or more")
	case n < 0:
		return Lines{}, refuse("lines is how many lines, 1 to %d", MaxLines)
	}
	from = max(from, 1)
	if n == 0 {
		n = DefaultLines
	}
	n = min(n, MaxLines)
	root, err := openRoot(w.dir)
	if err != nil {
		return Lines{}, err
	}
	defer root.close()
	f, err := root.openFile(name)
	if err != nil {
		return Lines{}, describe(name, err)
	}
	defer f.Close()
	out := Lines{Path: name, From: from, Total: -1}
	if fi, err := f.Stat(); err == nil {
		out.Size = fi.Size()
	}
	r := &lineReader{r: bufio.NewReaderSize(f, 64<<10)}
	head, err := r.r.Peek(sniff)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return Lines{}, describe(name, err)
	}
	if looksBinary(head, len(head) < sniff) {
		out.Binary = true
		return out, nil
	}
	if err := out.scan(ctx, r, name, n); err != nil {
		return Lines{}, err
	}
	out.Scanned = r.read
	if len(out.Text) == 0 && from > 1 {
		if out.Total >= 0 {
			return Lines{}, refuse("%s has %d lines, so none from line %d", name, out.Total, from)
		}
		return Lines{}, refuse("%s: line %d is past the first %d MiB, as far as a read looks; the file is %d bytes", name, from, MaxScan>>20, out.Size)
	}
	return out, nil
}

// scan reads the file's lines through r: the n from line l.From kept
// (cut at MaxReadBytes), then, as far as a read looks past them
// (countScan), its lines counted.
func (l *Lines) scan(ctx context.Context, r *lineReader, name string, n int) error {
	size := 0
	var done int64 = -1 // where the lines asked were had
	for line := 1; ; line++ {
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text, clipped, crlf, err := r.next()
		if errors.Is(err, io.EOF) {
			l.Total = line - 1
			break
		}
		if errors.Is(err, errScanned) {
			break
		}
		if err != nil {
			return describe(name, err)
		}
		l.CRLF = l.CRLF || crlf
		if done < 0 && (len(l.Text) == n || l.Cut) {
			done = r.read
		}
		if done >= 0 && r.read-done > countScan {
			break
		}
		if line < l.From || done >= 0 {
			continue
		}
		if size+len(text) > MaxReadBytes && len(l.Text) > 0 {
			l.Cut = true
			continue
		}
		size += len(text) + 1
		l.Text = append(l.Text, string(text))
		if clipped {
			l.Clipped++
		}
	}
	return nil
}

// errScanned: a read looked through MaxScan bytes.
var errScanned = errors.New("scanned as far as a read looks")

// lineReader gives a file's lines one at a time, each at most
// MaxLineBytes, reading at most MaxScan bytes in all.
type lineReader struct {
	r    *bufio.Reader
	read int64
	line []byte
}

// next is the next line without its end, whether it was cut, and
// whether it ended in "\r\n".
func (l *lineReader) next() (text []byte, clipped, crlf bool, err error) {
	l.line = l.line[:0]
	for {
		if l.read >= MaxScan {
			return nil, false, false, errScanned
		}
		chunk, err := l.r.ReadSlice('\n')
		l.read += int64(len(chunk))
		if room := MaxLineBytes + 2 - len(l.line); room > 0 {
			l.line = append(l.line, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(chunk) == 0 && len(l.line) == 0 {
			return nil, false, false, io.EOF
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, false, err
		}
		break
	}
	text = bytes.TrimSuffix(l.line, []byte("\n"))
	if crlf = bytes.HasSuffix(text, []byte("\r")); crlf {
		text = text[:len(text)-1]
	}
	if len(text) > MaxLineBytes {
		text, clipped = []byte(clip(string(text), MaxLineBytes)), true
	}
	return text, clipped, crlf, nil
}

// looksBinary says whether b, a file's start (all of it when whole), is
// not UTF-8 text: a NUL, or bytes that aren't UTF-8 (a rune cut at the
// end of a part is not counted).
func looksBinary(b []byte, whole bool) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if !whole {
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
				break
			}
			b = b[:len(b)-1]
		}
	}
	return !utf8.Valid(b)
}
