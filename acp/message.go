package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/lnk-dev/link/contract"
)

// JSON-RPC 2.0 error codes, and ACP's.
const (
	CodeParseError     = -32700 // not JSON
	CodeInvalidRequest = -32600 // JSON, but not a request, or one out of turn
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602 // params that break a rule; the message names it
	CodeInternalError  = -32603
	// CodeRequestCancelled answers a request its sender cancelled
	// ($/cancel_request), ACP's.
	CodeRequestCancelled = -32800
)

// Error is a JSON-RPC error object, sent and received as such.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error says the code and the message.
func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Errorf makes an Error of code with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorOf is the one place an error becomes a JSON-RPC error: an *Error
// stays itself, a *contract.RuleError is invalid params with its rule as
// the message, a cancelled or expired context says so, and anything else
// is an internal error carrying its text.
func ErrorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var rule *contract.RuleError
	if errors.As(err, &rule) {
		return &Error{Code: CodeInvalidParams, Message: rule.Error()}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeInternalError, Message: "the request ended before its answer: " + err.Error()}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID and Result or Error).
// Params and Result are kept raw, as they came.
type Message struct {
	ID     json.RawMessage // nil for a notification; a string or number
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error

	parts Joined // the params, as parts, when Params is nil
}

// Joined is a JSON value given as parts, each a slice of bytes already
// checked JSON as joined: Call and Notify send their concatenation,
// copied once, into the message, so a prompt of many megabytes being
// forwarded is held once as read and once as sent, never a third time as
// params put together first.
type Joined [][]byte

// IsRequest says whether m is a request, awaiting a response.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification says whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse says whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// DecodeMessage reads one JSON-RPC 2.0 message. Anything that isn't one
// (not JSON, a batch, a wrong version, an id that isn't a string or
// number, a response with both or neither of result and error) is an
// *Error: CodeParseError for bytes that aren't JSON, CodeInvalidRequest
// for JSON that isn't a message. The message's ID, Params and Result are
// slices of b, not copies: b is the caller's, and is not changed after.
func DecodeMessage(b []byte) (*Message, error) {
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return nil, &Error{Code: CodeParseError, Message: "a message is JSON"}
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, &Error{Code: CodeInvalidRequest, Message: "a message is a JSON object (batches are not ACP's)"}
	}
	var (
		version, method       string
		hasVersion, hasMethod bool
		id, params, result    json.RawMessage
		rpcErr                *Error
	)
	err := eachMember(b, func(key string, v []byte) (err error) {
		switch key {
		case "jsonrpc":
			version, hasVersion, err = stringMember(v)
		case "id":
			id = v
		case "method":
			method, hasMethod, err = stringMember(v)
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			var e *Error // on the heap only for a message that has one
			err = json.Unmarshal(v, &e)
			rpcErr = e
		}
		return err
	})
	if err != nil {
		return nil, &Error{Code: CodeInvalidRequest, Message: "a message's members have JSON-RPC's types: " + err.Error()}
	}
	if !hasVersion || version != "2.0" {
		return nil, &Error{Code: CodeInvalidRequest, Message: `a message says "jsonrpc": "2.0"`}
	}
	m := &Message{Params: params, Result: result, Error: rpcErr}
	if id != nil && string(id) != "null" {
		if !validID(id) {
			return nil, &Error{Code: CodeInvalidRequest, Message: "an id is a string or an integer"}
		}
		m.ID = id
	}
	if hasMethod {
		if method == "" {
			return nil, &Error{Code: CodeInvalidRequest, Message: "a method is a non-empty string"}
		}
		if result != nil || rpcErr != nil {
			return nil, &Error{Code: CodeInvalidRequest, Message: "a request has no result or error"}
		}
		m.Method = method
		if p := bytes.TrimSpace(params); len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return nil, &Error{Code: CodeInvalidRequest, Message: "params are an object or an array"}
		}
		return m, nil
	}
	if (result == nil) == (rpcErr == nil) {
		return nil, &Error{Code: CodeInvalidRequest, Message: "a response has a result or an error, not both"}
	}
	if m.ID == nil && rpcErr == nil {
		return nil, &Error{Code: CodeInvalidRequest, Message: "a response with a result has an id"}
	}
	return m, nil
}

// validID says whether id is a JSON string or an integer.
func validID(id json.RawMessage) bool {
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		if plainString(id) {
			return true
		}
		var s string
		return json.Unmarshal(id, &s) == nil
	default:
		// json.Number's Int64 is strconv.ParseInt of the literal.
		if !json.Valid(id) {
			return false
		}
		_, err := strconv.ParseInt(string(bytes.TrimRight(id, " \t\r\n")), 10, 64)
		return err == nil
	}
}

// plainString says whether lit is a JSON string literal without escapes
// or control characters, in valid UTF-8: one encoding/json reads as its
// bytes between the quotes.
func plainString(lit []byte) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return false
	}
	for _, c := range lit[1 : len(lit)-1] {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(lit)
}

// stringMember reads a member's value, valid JSON, as json.Unmarshal
// into a *string does: not set (ok false) for null, else the string, or
// an error for a value of another type. Messages are decoded without
// reflection.
func stringMember(v []byte) (s string, ok bool, err error) {
	if string(v) == "null" {
		return "", false, nil
	}
	if len(v) == 0 || v[0] != '"' {
		return "", false, errors.New("a string member holds another type")
	}
	s, err = unquote(v)
	if err != nil {
		return "", false, err
	}
	return s, true, nil
}

// encodeParts is a request or notification given as Joined params,
// encoded as Encode does but as parts: its start, the params' parts as
// they are, its end. nil when m is another, or a part holds a line break
// (Encode then compacts them).
func (m *Message) encodeParts() [][]byte {
	if m.parts == nil || m.Params != nil || m.Method == "" {
		return nil
	}
	for _, p := range m.parts {
		if bytes.ContainsAny(p, "\r\n") {
			return nil
		}
	}
	head := []byte(`{"jsonrpc":"2.0"`)
	if m.ID != nil {
		head = append(append(head, `,"id":`...), m.ID...)
	}
	name, _ := json.Marshal(m.Method)
	head = append(append(append(head, `,"method":`...), name...), `,"params":`...)
	out := make([][]byte, 0, len(m.parts)+2)
	return append(append(append(out, head), m.parts...), []byte("}"))
}

// Encode writes m as JSON. Params and Result go out byte for byte as they
// are held (after a check that they are JSON), so a forwarded message is
// what came.
func (m *Message) Encode() ([]byte, error) {
	var b bytes.Buffer
	params := m.Params
	if m.parts != nil {
		size := 0
		for _, p := range m.parts {
			size += len(p)
			if bytes.ContainsAny(p, "\r\n") { // joined to be compacted
				params = bytes.Join(m.parts, nil)
				size = -1
				break
			}
		}
		if size >= 0 {
			b.Grow(size + len(m.ID) + len(m.Method) + 64)
		}
	}
	b.Grow(len(params) + len(m.Result) + len(m.ID) + len(m.Method) + 64) // one slice of the message's size, not doubled into
	b.WriteString(`{"jsonrpc":"2.0"`)
	if m.ID != nil {
		b.WriteString(`,"id":`)
		b.Write(m.ID)
	} else if m.Method == "" {
		b.WriteString(`,"id":null`)
	}
	if m.Method != "" {
		b.WriteString(`,"method":`)
		writeName(&b, m.Method)
		switch {
		case m.parts != nil && params == nil:
			b.WriteString(`,"params":`)
			for _, p := range m.parts {
				b.Write(p)
			}
		case len(params) > 0:
			if !json.Valid(params) {
				return nil, fmt.Errorf("encode %s: params are not JSON", m.Method)
			}
			b.WriteString(`,"params":`)
			b.Write(compactLine(params))
		}
	} else if m.Error != nil {
		e, err := json.Marshal(m.Error)
		if err != nil {
			return nil, fmt.Errorf("encode error: %w", err)
		}
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		result := m.Result
		if len(result) == 0 {
			result = json.RawMessage("null")
		}
		if !json.Valid(result) {
			return nil, fmt.Errorf("encode result: not JSON")
		}
		b.WriteString(`,"result":`)
		b.Write(compactLine(result))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeName writes name as json.Marshal writes a string: as it is,
// between quotes, when it holds nothing json.Marshal escapes (as every
// method's name does), else marshalled.
func writeName(b *bytes.Buffer, name string) {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(name)
			b.Write(q)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(name)
	b.WriteByte('"')
}

// compactLine returns raw JSON unchanged unless it holds a line break,
// which only whitespace between tokens can be: then it is compacted, so
// every encoded message fits on one line.
func compactLine(raw json.RawMessage) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// rawOf turns v into raw JSON: a json.RawMessage as it is, nil as
// nothing, anything else marshalled.
func rawOf(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil, Joined:
		return nil, nil
	case json.RawMessage:
		return v, nil
	default:
		return json.Marshal(v)
	}
}
