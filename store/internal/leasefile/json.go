package leasefile

import (
	"encoding/json"
	"time"

	"github.com/lnk-dev/link/store"
)

// The lease's JSON, read and written twice a turn: by hand in the form
// writeLease writes (about 1 µs a read and a write, against 6.6 to 9.4 µs
// through encoding/json's reflection and validating pass:
// BenchmarkLeaseJSON), with FuzzDecode and FuzzEncode holding the two the
// same; by encoding/json in any other form.

const (
	holderKey  = `{"holder":"`
	expiresKey = `","expires":"`
	leaseEnd   = `"}`
)

// decode is json.Unmarshal of a lease. A lease as encode writes it,
// {"holder":"H","expires":"T"} and JSON's white space after, H of
// printable ASCII but '"' and '\', T without '\' or a control byte, is
// read by hand; any other bytes by json.Unmarshal.
func decode(b []byte) (store.Lease, error) {
	if l, ok := decodePlain(b); ok {
		return l, nil
	}
	var l store.Lease
	err := json.Unmarshal(b, &l)
	return l, err
}

// decodePlain reads b when it is a lease as encode writes one.
func decodePlain(b []byte) (store.Lease, bool) {
	rest, ok := cut(b, holderKey)
	if !ok {
		return store.Lease{}, false
	}
	holder, rest, ok := plainString(rest, false)
	if !ok {
		return store.Lease{}, false
	}
	if rest, ok = cut(rest, expiresKey[1:]); !ok {
		return store.Lease{}, false
	}
	expires, rest, ok := plainString(rest, true)
	if !ok {
		return store.Lease{}, false
	}
	if rest, ok = cut(rest, leaseEnd[1:]); !ok {
		return store.Lease{}, false
	}
	for _, c := range rest {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return store.Lease{}, false
		}
	}
	// As time.Time's UnmarshalJSON reads the string's bytes.
	var t time.Time
	if err := t.UnmarshalText(expires); err != nil {
		return store.Lease{}, false
	}
	return store.Lease{Holder: string(holder), Expires: t}, true
}

// cut is b after prefix, if b starts with it.
func cut(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}

// plainString is the bytes of b before its first '"', and what follows
// that quote, when none of them needs JSON's unescaping: no '\' and no
// control byte, and, unless any is allowed, no byte past ASCII either
// (JSON reads a bad UTF-8 sequence as U+FFFD).
func plainString(b []byte, any bool) (s, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c > 0x7e && !any:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// encode is json.Marshal of l. A holder json.Marshal writes as it is
// (printable ASCII but '"', '\' and the '<', '>' and '&' it escapes) and
// a time in UTC within the years it writes (0 to 9999) are written by
// hand; any other lease by json.Marshal.
func encode(l store.Lease) ([]byte, error) {
	if y := l.Expires.Year(); !plainHolder(l.Holder) || l.Expires.Location() != time.UTC || y < 0 || y > 9999 {
		return json.Marshal(l)
	}
	b := make([]byte, 0, len(holderKey)+len(l.Holder)+len(expiresKey)+len(time.RFC3339Nano)+len(leaseEnd)+1)
	b = append(b, holderKey...)
	b = append(b, l.Holder...)
	b = append(b, expiresKey...)
	b = l.Expires.AppendFormat(b, time.RFC3339Nano)
	return append(b, leaseEnd...), nil
}

// plainHolder says whether json.Marshal writes s between its quotes as
// it is.
func plainHolder(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
