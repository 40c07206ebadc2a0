package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/lnk-dev/link/contract"
)

// The decoding here reads members and elements of JSON already checked
// valid (json.Valid) as slices of the bytes read, never copies: a prompt
// of many megabytes is then held once as read and once as its blocks'
// strings, not once more at each level of its message.

var errNotObject = errors.New("not a JSON object")

// eachMember calls fn with each member of the JSON object b: its key,
// unescaped, and its value as a slice of b. b must be valid JSON; one
// that isn't an object is errNotObject.
func eachMember(b []byte, fn func(key string, value []byte) error) error {
	return eachMemberAt(b, func(key string, start, end int) error { return fn(key, b[start:end]) })
}

// Members calls fn with each member of the JSON object b, valid JSON
// (json.Valid): its key, unescaped, and its value as a slice of b, never
// a copy. One that isn't an object is an error.
func Members(b []byte, fn func(key string, value []byte) error) error {
	return eachMember(b, fn)
}

// eachMemberAt is eachMember giving each value as where it starts and
// ends in b.
func eachMemberAt(b []byte, fn func(key string, start, end int) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		kend := stringEnd(b, i)
		key, err := unquote(b[i:kend])
		if err != nil {
			return err
		}
		i = skipSpace(b, skipSpace(b, kend)+1) // past ':'
		vend := valueEnd(b, i)
		if err := fn(key, i, vend); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1) // past ','
	}
	return nil
}

// eachElement calls fn with each element of the JSON array b, as a slice
// of b. b must be valid JSON; it returns false when it isn't an array.
func eachElement(b []byte, fn func(value []byte) error) (bool, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false, nil
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true, nil
	}
	for i < len(b) {
		vend := valueEnd(b, i)
		if err := fn(b[i:vend]); err != nil {
			return true, err
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] == ']' {
			return true, nil
		}
		i = skipSpace(b, i+1)
	}
	return true, nil
}

// unquote is the string a JSON string literal holds, as encoding/json
// reads it: its bytes when it has no escape and is valid UTF-8.
func unquote(lit []byte) (string, error) {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		if s, ok := common(lit[1 : len(lit)-1]); ok {
			return s, nil
		}
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// common is b as a string without a copy when it is one of the keys and
// values every turn's messages hold (a message's members, its version,
// the methods and updates of a turn, a prompt's): reading a message then
// allocates no string for them.
func common(b []byte) (string, bool) {
	switch string(b) { // compared without a conversion
	case "jsonrpc":
		return "jsonrpc", true
	case "2.0":
		return "2.0", true
	case "id":
		return "id", true
	case "method":
		return "method", true
	case "params":
		return "params", true
	case "result":
		return "result", true
	case "error":
		return "error", true
	case "sessionId":
		return "sessionId", true
	case "prompt":
		return "prompt", true
	case "_meta":
		return "_meta", true
	case "type":
		return "type", true
	case "text":
		return "text", true
	case "update":
		return "update", true
	case "sessionUpdate":
		return "sessionUpdate", true
	case "content":
		return "content", true
	case "stopReason":
		return "stopReason", true
	case MethodInitialize:
		return MethodInitialize, true
	case MethodSessionResume:
		return MethodSessionResume, true
	case MethodSessionPrompt:
		return MethodSessionPrompt, true
	case MethodSessionUpdate:
		return MethodSessionUpdate, true
	case MethodSessionCancel:
		return MethodSessionCancel, true
	case contract.MethodTaken:
		return contract.MethodTaken, true
	}
	return "", false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the end of the valid JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default: // a number, true, false or null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// stringEnd is the end of the JSON string starting at b[i] (a quote).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return len(b)
		}
		j += k
		if b[j] == '\\' {
			j += 2
			continue
		}
		return j + 1
	}
	return len(b)
}
