package acp

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// largeString is the length of a string literal past which a prompt's
// decoding reads it where it lies in the message instead of copying it:
// a shorter one costs little to copy, and a copy doesn't hold the whole
// message alive.
var largeString = 32 << 10

// unquoteInPlace is the string the JSON string literal lit holds, as
// encoding/json reads it, made of lit's own memory: lit's bytes are the
// string's when it has no escape, else its escapes are undone in place
// (each escape's character is no longer than the escape). lit is not to
// be used or changed after. Invalid UTF-8, which encoding/json replaces
// with U+FFFD (three bytes for one), is read by a copy.
func unquoteInPlace(lit []byte) (string, error) {
	if len(lit) < 2 || !utf8.Valid(lit) {
		return unquote(lit)
	}
	body := lit[1 : len(lit)-1]
	first := bytes.IndexByte(body, '\\')
	if first < 0 {
		return unsafe.String(unsafe.SliceData(body), len(body)), nil
	}
	out, ok := unescapeInPlace(body, first)
	if !ok {
		return unquote(lit)
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

// unescapeInPlace undoes body's escapes, the first at first, writing the
// result over body from its start, and returns it; false when an escape
// isn't one of JSON's (the literal wasn't valid JSON).
func unescapeInPlace(body []byte, first int) ([]byte, bool) {
	w := first
	for r := first; r < len(body); {
		c := body[r]
		if c != '\\' {
			// Copy up to the next escape in one move.
			next := bytes.IndexByte(body[r:], '\\')
			if next < 0 {
				next = len(body) - r
			}
			w += copy(body[w:], body[r:r+next])
			r += next
			continue
		}
		if r+1 >= len(body) {
			return nil, false
		}
		switch e := body[r+1]; e {
		case '"', '\\', '/':
			body[w] = e
		case 'b':
			body[w] = '\b'
		case 'f':
			body[w] = '\f'
		case 'n':
			body[w] = '\n'
		case 'r':
			body[w] = '\r'
		case 't':
			body[w] = '\t'
		case 'u':
			ch, ok := hex4(body[r+2:])
			if !ok {
				return nil, false
			}
			r += 6
			if utf16.IsSurrogate(ch) {
				// A pair makes one character; a lone half is U+FFFD.
				if lo, ok := hex4(body[min(r+2, len(body)):]); ok && r+1 < len(body) && body[r] == '\\' && body[r+1] == 'u' {
					if dec := utf16.DecodeRune(ch, lo); dec != utf8.RuneError {
						r += 6
						w += utf8.EncodeRune(body[w:], dec)
						continue
					}
				}
				ch = utf8.RuneError
			}
			w += utf8.EncodeRune(body[w:], ch)
			continue
		default:
			return nil, false
		}
		w++
		r += 2
	}
	return body[:w], true
}

// hex4 reads the four hex digits at b's start as a UTF-16 code unit.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// aside is a large string member of a block taken out of the copy that
// json.Unmarshal reads, and read in place.
type aside struct {
	in, key string // in: "" for the block itself, or "resource"
	lit     []byte
}

// fieldsInPlace are the members of a block, and of its resource, whose
// large strings decodeBlock reads in place.
var fieldsInPlace = map[string]map[string]bool{
	"":         {"text": true, "data": true},
	"resource": {"text": true, "blob": true},
}

// readMode is how a prompt's blocks are read.
type readMode uint8

const (
	readCopy    readMode = iota // as json.Unmarshal reads them, copying their strings
	readInPlace                 // large strings read where they lie, the bytes changed
	readCheck                   // large strings looked at where they lie, kept nowhere
)

// decodeBlock reads one content block from item, as json.Unmarshal
// does; readInPlace reads its large text, data, and resource text and
// blob where they lie in item (unquoteInPlace), and item is not to be
// used or changed after; readCheck reads them not at all (checkedLiteral),
// item left as it was, for checkBlock alone.
func decodeBlock(item []byte, mode readMode) (Block, error) {
	var b Block
	if mode == readCopy || len(item) < largeString {
		err := json.Unmarshal(item, &b)
		return b, err
	}
	var asides []aside
	small := make([]byte, 0, 256)
	at := 0
	// A name given twice (json.Unmarshal folds case, and merges a second
	// resource into the first) is read by json.Unmarshal, copying.
	var twice bool
	var take func(in string, obj []byte, base int) error
	take = func(in string, obj []byte, base int) error {
		seen := map[string]bool{}
		return eachMemberAt(obj, func(key string, start, end int) error {
			folded := strings.ToLower(key)
			twice = twice || seen[folded]
			seen[folded] = true
			v := obj[start:end]
			switch {
			case in == "" && key == "resource" && len(v) >= largeString && v[0] == '{':
				return take("resource", v, base+start)
			case fieldsInPlace[in][key] && len(v) >= largeString && v[0] == '"':
				asides = append(asides, aside{in: in, key: key, lit: v})
				small = append(small, item[at:base+start]...)
				small = append(small, `""`...)
				at = base + end
			}
			return nil
		})
	}
	if err := take("", item, 0); err != nil {
		return b, err
	}
	if twice {
		err := json.Unmarshal(item, &b)
		return b, err
	}
	small = append(small, item[at:]...)
	if err := json.Unmarshal(small, &b); err != nil {
		return b, err
	}
	for _, a := range asides {
		read := unquoteInPlace
		switch {
		case mode == readCheck && a.key == "text":
			read = func([]byte) (string, error) { return "", nil } // checkBlock asks nothing of a text
		case mode == readCheck:
			read = checkedLiteral
		}
		s, err := read(a.lit)
		if err != nil {
			return b, err
		}
		switch {
		case a.in == "" && a.key == "text":
			b.Text = s
		case a.in == "" && a.key == "data":
			b.Data = s
		case b.Resource == nil: // "resource": null after all
		case a.key == "text":
			b.Resource.Text = s
		case a.key == "blob":
			b.Resource.Blob = s
		}
	}
	return b, nil
}

// checkedLiteral stands for the large string literal lit in a block
// read only to be checked (readCheck): lit is left as it was, and the
// string is "" when lit holds none, "AAAA" when it holds base64, as
// checkBlock asks of data and a blob, "!" when it doesn't. lit is copied
// only when it has an escape.
func checkedLiteral(lit []byte) (string, error) {
	body := lit[1 : len(lit)-1]
	if len(body) == 0 {
		return "", nil
	}
	ok := false
	if bytes.IndexByte(body, '\\') < 0 {
		ok = isBase64(body)
	} else {
		s, err := unquote(lit)
		if err != nil {
			return "", err
		}
		ok = isBase64(s)
	}
	if ok {
		return "AAAA", nil
	}
	return "!", nil
}
