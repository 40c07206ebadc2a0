package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LinkMeta is the _meta.link of a prompt or an answer: what Link says beside it.
type LinkMeta struct {
	// From names a sender who isn't the owner; empty is the owner.
	From string `json:"from,omitempty"`
	// FromName is the sender's name on their connection: words for the
	// model, never who they are.
	FromName string `json:"fromName,omitempty"`
	// Hops counts the messages, each sent by an agent on its own, that led
	// to this one.
	Hops int `json:"hops,omitempty"`
	// Tools, when not nil, are the tools the conversation may use from now
	// on; an empty list means none.
	Tools *[]string `json:"tools,omitempty"`
	// Model is the model the conversation runs on from now on.
	Model string `json:"model,omitempty"`
	// Activity marks a streamed tool call as shown or not (harness to bridge).
	Activity *bool `json:"activity,omitempty"`
	// Steered marks the answer of a prompt that joined a running turn.
	Steered bool `json:"steered,omitempty"`
}

// Bounds of _meta.link.
const (
	MaxFromName = 64  // characters
	MaxTools    = 256 // names in a tools list
	MaxName     = 128 // characters of a tool's or model's name, or a from's id
	MaxHops     = 1 << 20
)

// The senders a from may name, each as <kind>:<id>.
var fromKinds = []string{"schedule", "task", "agent", "run", "person", "webhook"}

// ParseMeta reads the _meta.link of a prompt's _meta. A _meta that is
// absent or null, or has no "link", says nothing; a _meta that isn't an
// object, or a link that breaks a rule, is refused.
func ParseMeta(meta json.RawMessage) (LinkMeta, error) {
	meta = bytes.TrimSpace(meta)
	if len(meta) == 0 || string(meta) == "null" {
		return LinkMeta{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return LinkMeta{}, refuse("_meta", "_meta is an object")
	}
	link, ok := m["link"]
	if !ok {
		return LinkMeta{}, nil
	}
	return ParseLinkMeta(link)
}

// ParseLinkMeta reads a _meta.link value and checks every rule of it.
func ParseLinkMeta(raw json.RawMessage) (LinkMeta, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return LinkMeta{}, refuse("_meta.link", "_meta.link is an object")
	}
	var s LinkMeta
	for key, v := range fields {
		var err error
		switch key {
		case "from":
			err = parseString(v, "from", &s.From, CheckFrom)
		case "fromName":
			// Checked raw first: decoding turns invalid UTF-8 into U+FFFD.
			if !utf8.Valid(v) {
				err = refuse("fromName", "fromName is plain UTF-8")
				break
			}
			err = parseString(v, "fromName", &s.FromName, CheckFromName)
		case "hops":
			s.Hops, err = parseHops(v)
		case "tools":
			var tools []string
			tools, err = parseTools(v)
			s.Tools = &tools
		case "model":
			err = parseString(v, "model", &s.Model, CheckModel)
		case "activity":
			var b bool
			err = parseBool(v, "activity", &b)
			s.Activity = &b
		case "steered":
			err = parseBool(v, "steered", &s.Steered)
		default:
			err = refuse("_meta.link", "%q is not one of Link's: from, fromName, hops, tools, model, activity, steered", truncate(key, 32))
		}
		if err != nil {
			return LinkMeta{}, err
		}
	}
	if s.FromName != "" && s.From == "" {
		return LinkMeta{}, refuse("fromName", "fromName is said only with from")
	}
	return s, nil
}

// CheckFrom checks a sender: schedule:<id>, task:<id>, agent:<id>,
// run:<id>, person:<connection>:<user id> or webhook:<name>.
func CheckFrom(from string) error {
	kind, id, ok := strings.Cut(from, ":")
	if !ok || !contains(fromKinds, kind) {
		return refuse("from", "from is one of %s, then ':' and an id", strings.Join(fromKinds, ":, ")+":")
	}
	if kind == "person" {
		conn, user, ok := strings.Cut(id, ":")
		if !ok || !isLower(conn) || !isID(user) {
			return refuse("from", "a person is person:<connection>:<user id>")
		}
		return nil
	}
	if !isID(id) {
		return refuse("from", "a from's id is 1 to %d letters, digits or -._:/@+=", MaxName)
	}
	return nil
}

// CheckFromName checks a sender's name: plain UTF-8, 1 to 64 characters,
// no control character (Cc), format character (Cf: U+200B, U+202E...)
// or line or paragraph separator, and no U+FFFD, the mark a decoder
// leaves of invalid UTF-8. Its words reach the model and the copy for
// people, so nothing in them may be invisible or reorder what follows.
func CheckFromName(name string) error {
	if !utf8.ValidString(name) {
		return refuse("fromName", "fromName is plain UTF-8")
	}
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxFromName {
		return refuse("fromName", "fromName is 1 to %d characters", MaxFromName)
	}
	for _, r := range name {
		switch {
		case r == utf8.RuneError:
			return refuse("fromName", "fromName is plain UTF-8 (U+FFFD marks a broken one)")
		case unicode.IsControl(r), unicode.In(r, unicode.Zl, unicode.Zp):
			return refuse("fromName", "fromName holds no control character (U+%04X)", r)
		case unicode.Is(unicode.Cf, r):
			return refuse("fromName", "fromName holds no format character (U+%04X)", r)
		}
	}
	return nil
}

// CheckToolName checks one name of a tools list: 1 to 128 letters, digits,
// '_', '-' and '.'.
func CheckToolName(name string) error {
	if !isName(name, "_-.") {
		return refuse("tools", "a tool's name is 1 to %d letters, digits, '_', '-' or '.'", MaxName)
	}
	return nil
}

// CheckModel checks a model's name or alias: 1 to 128 letters, digits and
// -._:/@.
func CheckModel(model string) error {
	if !isName(model, "-._:/@") {
		return refuse("model", "a model is 1 to %d letters, digits or -._:/@", MaxName)
	}
	return nil
}

func parseString(v json.RawMessage, field string, dst *string, check func(string) error) error {
	if err := json.Unmarshal(v, dst); err != nil || string(bytes.TrimSpace(v)) == "null" {
		return refuse(field, "%s is a string", field)
	}
	return check(*dst)
}

func parseBool(v json.RawMessage, field string, dst *bool) error {
	if err := json.Unmarshal(v, dst); err != nil || string(bytes.TrimSpace(v)) == "null" {
		return refuse(field, "%s is true or false", field)
	}
	return nil
}

func parseHops(v json.RawMessage) (int, error) {
	v = bytes.TrimSpace(v)
	var n json.Number
	if len(v) == 0 || v[0] == '"' || json.Unmarshal(v, &n) != nil {
		return 0, refuse("hops", "hops is a non-negative integer")
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f != math.Trunc(f) {
		return 0, refuse("hops", "hops is a non-negative integer")
	}
	if f > MaxHops {
		return 0, refuse("hops", "hops is at most %d", MaxHops)
	}
	return int(f), nil
}

func parseTools(v json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil || list == nil {
		return nil, refuse("tools", "tools is a list of names")
	}
	if len(list) > MaxTools {
		return nil, refuse("tools", "tools is at most %d names", MaxTools)
	}
	tools := make([]string, 0, len(list))
	for _, item := range list {
		var name string
		if err := json.Unmarshal(item, &name); err != nil {
			return nil, refuse("tools", "tools is a list of names, each a string")
		}
		if err := CheckToolName(name); err != nil {
			return nil, err
		}
		if !contains(tools, name) {
			tools = append(tools, name)
		}
	}
	return tools, nil
}

// ParseToolsHeader reads a Link-Tools header: names separated by commas,
// an empty value meaning none.
func ParseToolsHeader(h string) ([]string, error) {
	tools := []string{}
	if strings.TrimSpace(h) == "" {
		return tools, nil
	}
	parts := strings.Split(h, ",")
	if len(parts) > MaxTools {
		return nil, refuse("tools", "tools is at most %d names", MaxTools)
	}
	for _, p := range parts {
		name := strings.TrimSpace(p)
		if err := CheckToolName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", HeaderTools, err)
		}
		if !contains(tools, name) {
			tools = append(tools, name)
		}
	}
	return tools, nil
}

// Narrow applies the tool-list narrowing rule: current is a conversation's
// tools so far (nil: not narrowed, every tool) and by a message's list
// (nil: it named none, and current stays). A later list narrows to the
// tools in both, never widens.
func Narrow(current, by *[]string) *[]string {
	if by == nil {
		return current
	}
	if current == nil {
		out := append([]string{}, (*by)...)
		return &out
	}
	out := []string{}
	for _, t := range *current {
		if contains(*by, t) {
			out = append(out, t)
		}
	}
	return &out
}

// Allowed says whether a conversation narrowed to tools may use name.
func Allowed(tools *[]string, name string) bool {
	return tools == nil || contains(*tools, name)
}

func isName(s, punct string) bool {
	if s == "" || utf8.RuneCountInString(s) > MaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(punct, c) >= 0) {
			return false
		}
	}
	return true
}

func isID(s string) bool { return isName(s, "-._:/@+=") }

func isLower(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
