// Package jsonx writes large strings into JSON with one copy: Holes
// stands for each while a value is marshaled and Fill puts them in place,
// in one slice of exactly the JSON's length, and AppendString and
// StringLen quote a string as encoding/json does. A prompt of many
// megabytes marshaled by encoding/json (or an encoder whose nested
// Marshalers each copy their children's bytes) costs several times its
// size in buffers grown by doubling; through Holes it costs its size.
package jsonx

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MinHole is the shortest string Hold stands for: a shorter one costs
// little to copy, and is left in the value as it is.
const MinHole = 32 << 10

// Holes holds the large strings of one value while it is marshaled. The
// zero Holes is ready; a Holes is for one goroutine.
type Holes struct {
	prefix string // `lnk-hole-<random>-`, unguessable, so no text holds it
	held   []string
}

// Hold returns s when it is shorter than MinHole, or h is nil, else a
// short placeholder that Fill replaces with s quoted.
func (h *Holes) Hold(s string) string {
	if h == nil || len(s) < MinHole {
		return s
	}
	if h.prefix == "" {
		var r [12]byte
		rand.Read(r[:])
		h.prefix = "lnk-hole-" + hex.EncodeToString(r[:]) + "-"
	}
	h.held = append(h.held, s)
	return h.prefix + strconv.Itoa(len(h.held)-1)
}

// Held is how many strings h holds.
func (h *Holes) Held() int { return len(h.held) }

// Fill returns b, JSON marshaled from a value holding h's placeholders,
// with each placeholder's string in its place, quoted, then suffix: one
// slice of exactly that length. With nothing held it is b and suffix.
// Each string is let go of once filled.
func (h *Holes) Fill(b []byte, suffix string) []byte {
	if len(h.held) == 0 {
		if suffix == "" {
			return b
		}
		return append(b, suffix...)
	}
	quoted := []byte(`"` + h.prefix)
	size := len(b) + len(suffix)
	for rest := b; ; {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			break
		}
		n, end, ok := h.hole(rest[i:])
		if !ok {
			rest = rest[i+1:]
			continue
		}
		size += StringLen(h.held[n]) - end
		rest = rest[i+end:]
	}
	out := make([]byte, 0, size)
	for rest := b; ; {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			out = append(out, rest...)
			break
		}
		n, end, ok := h.hole(rest[i:])
		if !ok {
			out = append(out, rest[:i+1]...)
			rest = rest[i+1:]
			continue
		}
		out = append(out, rest[:i]...)
		out = AppendString(out, h.held[n])
		rest = rest[i+end:]
	}
	for i := range h.held {
		h.held[i] = ""
	}
	return append(out, suffix...)
}

// Body is Fill's JSON as a reader that quotes each string as it is read,
// a chunk at a time, so no copy of the string is made: size is its length
// and open gives a reader from its start, again for each call (a request
// sent again). h is not to be changed after.
func (h *Holes) Body(b []byte) (size int64, open func() io.Reader) {
	if len(h.held) == 0 {
		// No placeholder to look for: b is the body, one part.
		return int64(len(b)), func() io.Reader { return &bodyReader{parts: []bodyPart{{raw: b}}} }
	}
	quoted := []byte(`"` + h.prefix)
	var parts []bodyPart
	size = int64(len(b))
	for rest := b; ; {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			parts = append(parts, bodyPart{raw: rest})
			break
		}
		n, end, ok := h.hole(rest[i:])
		if !ok {
			parts = append(parts, bodyPart{raw: rest[:i+1]})
			rest = rest[i+1:]
			continue
		}
		parts = append(parts, bodyPart{raw: rest[:i]}, bodyPart{text: h.held[n], quote: true})
		size += int64(StringLen(h.held[n]) - end)
		rest = rest[i+end:]
	}
	return size, func() io.Reader { return &bodyReader{parts: slices.Clone(parts)} }
}

// bodyPart is a piece of a Body: raw JSON, or a string to quote.
type bodyPart struct {
	raw   []byte
	text  string
	quote bool
}

// chunk is how much of a string a bodyReader escapes at a time.
var chunk = 32 << 10

// bodyReader reads a Body's parts in order, escaping a string a chunk at
// a time into buf.
type bodyReader struct {
	parts []bodyPart
	buf   []byte // what's escaped and not yet read
	esc   []byte // buf's memory, used again for each chunk
	at    int    // how far into the current string
	open  bool   // the current string's opening quote is written
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) > 0 {
			c := copy(p[n:], r.buf)
			r.buf = r.buf[c:]
			n += c
			continue
		}
		if len(r.parts) == 0 {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		part := &r.parts[0]
		if !part.quote {
			c := copy(p[n:], part.raw)
			part.raw = part.raw[c:]
			n += c
			if len(part.raw) == 0 {
				r.parts = r.parts[1:]
			}
			continue
		}
		r.buf = r.esc[:0]
		if !r.open {
			r.buf, r.open = append(r.buf, '"'), true
		}
		if r.at == len(part.text) {
			r.buf = append(r.buf, '"')
			r.parts, r.at, r.open = r.parts[1:], 0, false
			continue
		}
		end := min(r.at+chunk, len(part.text))
		// Not within a character: back to its first byte.
		for back := 0; end < len(part.text) && back < utf8.UTFMax-1 && !utf8.RuneStart(part.text[end]) && end-1 > r.at; back++ {
			end--
		}
		r.buf = appendEscaped(r.buf, part.text[r.at:end])
		r.esc = r.buf
		r.at = end
	}
	return n, nil
}

// hole reads the placeholder quoted at the start of b: the index of its
// string and the length of the placeholder with its quotes.
func (h *Holes) hole(b []byte) (n, end int, ok bool) {
	digits := b[1+len(h.prefix):]
	j := bytes.IndexByte(digits, '"')
	if j <= 0 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(string(digits[:j]))
	if err != nil || n < 0 || n >= len(h.held) {
		return 0, 0, false
	}
	return n, 1 + len(h.prefix) + j + 1, true
}

const hexDigits = "0123456789abcdef"

// htmlSafe says which ASCII bytes encoding/json writes as they are, its
// HTML escaping on: not the controls, '"', '\\', '<', '>' or '&'.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// AppendString appends s quoted as a JSON string as encoding/json.Marshal
// quotes it: HTML's <, > and & escaped, invalid UTF-8 as U+FFFD, U+2028
// and U+2029 escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(appendEscaped(dst, s), '"')
}

// appendEscaped appends s escaped as inside a JSON string, unquoted.
func appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// StringLen is the length of s quoted by AppendString.
func StringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			switch {
			case htmlSafe[b]:
				n++
			case b == '\\', b == '"', b == '\b', b == '\f', b == '\n', b == '\r', b == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// Fit is the longest prefix of s, ending at a rune's start, whose JSON
// string (StringLen) takes at most n bytes.
func Fit(s string, n int) string {
	if n <= 2 {
		return ""
	}
	lo, hi := 0, min(len(s), n)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if StringLen(runeStart(s, mid)) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return runeStart(s, lo)
}

// runeStart is the longest prefix of s of at most n bytes ending at a
// rune's start.
func runeStart(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
