package delivery

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAnswer appends k's JSON to b without its closing brace: the
// bytes json.Marshal makes of k, with no reflection (a turn's hold
// encodes its answer once).
func appendAnswer(b []byte, k Answer) ([]byte, error) {
	if !jsonTime(k.At) || !k.EventTime.IsZero() && !jsonTime(k.EventTime) {
		m, err := json.Marshal(k) // its error: a time JSON can't hold
		if err != nil {
			return nil, err
		}
		return append(b, m[:len(m)-1]...), nil
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, k.ID)
	b = append(b, `,"thread":`...)
	b = appendJSONString(b, k.Thread)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, k.Text)
	b = append(b, `,"at":"`...)
	b = append(k.At.AppendFormat(b, time.RFC3339Nano), '"')
	if k.Seq != 0 {
		b = strconv.AppendInt(append(b, `,"seq":`...), k.Seq, 10)
	}
	if !k.EventTime.IsZero() {
		b = append(b, `,"eventTime":"`...)
		b = append(k.EventTime.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if k.ForChat {
		b = append(b, `,"forChat":true`...)
	}
	return b, nil
}

// jsonTime says t is a time time.Time's MarshalJSON writes as
// RFC3339Nano: a year of four digits, an offset in whole minutes.
func jsonTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off%60 == 0 && off > -24*3600 && off < 24*3600
}

// appendJSONString appends s quoted as encoding/json quotes a string: <,
// > and & escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}
