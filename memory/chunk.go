package memory

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chunks of a file are cut at a blank line once past chunkSoft bytes,
// and at any line past chunkHard, so a hit names a few lines.
const (
	chunkSoft = 1024
	chunkHard = 4096
)

// isText says whether b is text search reads: UTF-8 with no NUL.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// lineAt is one line of a file: its number from 1, its first byte, and
// its text without its newline.
type lineAt struct {
	n   int
	off int64
	s   string
}

func splitLines(b []byte) []lineAt {
	var out []lineAt
	var off int64
	for n := 1; len(b) > 0; n++ {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		out = append(out, lineAt{n: n, off: off, s: strings.TrimSuffix(string(l), "\r")})
		off += int64(len(l)) + 1
	}
	return out
}

// cutLong is ls with each line longer than chunkHard cut into pieces
// of at most chunkHard bytes, each a line of its own at its place (the
// same number, its own first byte), cut after a space where one is near
// the end, else between two characters: a chunk, and so a row of the
// index, stays small whatever a file's shape (a 100 MB line, an answer
// of 16 MiB on one line).
func cutLong(ls []lineAt) []lineAt {
	long := false
	for _, l := range ls {
		if len(l.s) > chunkHard {
			long = true
			break
		}
	}
	if !long {
		return ls
	}
	out := make([]lineAt, 0, len(ls))
	for _, l := range ls {
		for len(l.s) > chunkHard {
			cut := chunkHard
			if i := strings.LastIndexByte(l.s[:cut], ' '); i >= chunkHard/2 {
				cut = i + 1
			}
			for cut > 0 && !utf8.RuneStart(l.s[cut]) {
				cut--
			}
			out = append(out, lineAt{n: l.n, off: l.off, s: l.s[:cut]})
			l = lineAt{n: l.n, off: l.off + int64(cut), s: l.s[cut:]}
		}
		out = append(out, l)
	}
	return out
}

// chunk covers lines from..to (inclusive) of ls, its text theirs.
func chunk(ls []lineAt, text string) Chunk {
	first, last := ls[0], ls[len(ls)-1]
	return Chunk{Line: first.n, Lines: last.n - first.n + 1, Off: first.off, Len: int(last.off-first.off) + len(last.s), Text: text}
}

// chunkFile cuts a file into chunks of lines.
func chunkFile(b []byte) []Chunk {
	ls := cutLong(splitLines(b))
	var out []Chunk
	start, size := 0, 0
	flush := func(end int) {
		if end > start {
			var t strings.Builder
			for _, l := range ls[start:end] {
				t.WriteString(l.s)
				t.WriteByte('\n')
			}
			if strings.TrimSpace(t.String()) != "" {
				out = append(out, chunk(ls[start:end], t.String()))
			}
		}
		start, size = end, 0
	}
	for i, l := range ls {
		size += len(l.s) + 1
		if size >= chunkHard || size >= chunkSoft && strings.TrimSpace(l.s) == "" {
			flush(i + 1)
		}
	}
	flush(len(ls))
	return out
}

// chunkNotes makes a chunk of each note.
func chunkNotes(b []byte) []Chunk {
	var out []Chunk
	for _, l := range splitLines(b) {
		if strings.TrimSpace(l.s) != "" {
			out = append(out, chunk([]lineAt{l}, l.s))
		}
	}
	return out
}

// parseHeading reads a message's heading in a copy for people,
// "## Owner · 2026-11-30 09:15 UTC · #9": who and when, and its number.
func parseHeading(s string) (label string, seq int64, ok bool) {
	rest, ok := strings.CutPrefix(s, "## ")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, " · #")
	if i < 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+len(" · #"):], 10, 64)
	if err != nil || seq < 1 {
		return "", 0, false
	}
	return rest[:i], seq, true
}

// chunkCopy cuts a conversation's copy into chunks of whole messages,
// each from its heading to the next, as many together as come to
// chunkSoft bytes (a message longer than that alone): fewer rows for
// the index to write, and a search names the message within (message).
// What is indexed is the messages' text, without headings or trailers.
func chunkCopy(b []byte) []Chunk {
	ls := cutLong(splitLines(b))
	var out []Chunk
	var group []lineAt // the lines of the messages gathered
	var body strings.Builder
	var first Chunk // the group's first message: its number and heading
	var msg Chunk   // the message the lines are of
	flush := func() {
		for len(group) > 1 && strings.TrimSpace(group[len(group)-1].s) == "" {
			group = group[:len(group)-1]
		}
		if len(group) > 0 {
			c := chunk(group, body.String())
			c.Seq, c.Label = first.Seq, first.Label
			out = append(out, c)
		}
		group = nil
		body.Reset()
	}
	in := false
	for _, l := range ls {
		if label, seq, ok := parseHeading(l.s); ok {
			if body.Len() >= chunkSoft {
				flush()
			}
			msg = Chunk{Seq: seq, Label: label}
			if len(group) == 0 {
				first = msg
			}
			in = true
			group = append(group, l)
			continue
		}
		if !in {
			continue
		}
		if len(group) == 0 {
			first = msg // a long message's lines after its first chunk
		}
		group = append(group, l)
		if strings.HasPrefix(l.s, "<!-- seq ") && strings.HasSuffix(l.s, " -->") {
			continue
		}
		body.WriteString(l.s)
		body.WriteByte('\n')
		if body.Len() >= chunkHard {
			flush() // a long message: its next lines are a chunk of it too
		}
	}
	flush()
	return out
}

// message is the message of a chunk of a copy that has the most of terms
// (the latest of those that tie, what was said last): its first line in the copy, its lines,
// its number and heading, and its text.
func message(c Chunk, text string, terms []string) (Chunk, string) {
	best, bestN := c, -1
	var bestText string
	var cur Chunk
	var body strings.Builder
	end := func() {
		if cur.Seq == 0 {
			return
		}
		if n := hits(body.String(), terms); n >= bestN {
			best, bestN, bestText = cur, n, body.String()
		}
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if label, seq, ok := parseHeading(l); ok {
			end()
			cur = Chunk{Line: c.Line + i, Seq: seq, Label: label}
			body.Reset()
		}
		if cur.Seq != 0 {
			cur.Lines = c.Line + i - cur.Line + 1
			body.WriteString(l)
			body.WriteByte('\n')
		}
	}
	end()
	if bestN < 0 {
		return c, text
	}
	for best.Lines > 1 && strings.TrimSpace(lines[best.Line-c.Line+best.Lines-1]) == "" {
		best.Lines--
	}
	return best, bestText
}

// hits is how many of terms text has, in any case.
func hits(text string, terms []string) int {
	low := strings.ToLower(text)
	n := 0
	for _, t := range terms {
		if strings.Contains(low, t) {
			n++
		}
	}
	return n
}
