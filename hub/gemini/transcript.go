package gemini

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
)

// Chat is what an export reads of a chat file.
type Chat struct {
	// SessionID and LastUpdated are the session's metadata as the file's
	// lines leave it ("" when it has none).
	SessionID, LastUpdated string
	// Entries is what was said, in order.
	Entries []contract.StateEntry
	// Resumable says whether Gemini CLI takes the file for a session it
	// can load: a message of it the user's that isn't passed over, or
	// Gemini's with text, thoughts or tool calls. Gemini deletes every
	// file of a session at its start when one of them isn't.
	Resumable bool
}

// record is a line of a chat file, as far as Parse reads it.
type record struct {
	ID             *string         `json:"id"`
	RewindTo       *string         `json:"$rewindTo"`
	Set            json.RawMessage `json:"$set"`
	SessionID      *string         `json:"sessionId"`
	ProjectHash    *string         `json:"projectHash"`
	LastUpdated    *string         `json:"lastUpdated"`
	Messages       json.RawMessage `json:"messages"`
	Type           string          `json:"type"`
	Timestamp      string          `json:"timestamp"`
	Content        json.RawMessage `json:"content"`
	DisplayContent json.RawMessage `json:"displayContent"`
	Thoughts       json.RawMessage `json:"thoughts"`
	ToolCalls      json.RawMessage `json:"toolCalls"`
}

// part is a part of a message's content, as far as Parse reads it.
type part struct {
	Text    *string `json:"text"`
	Thought bool    `json:"thought"`
}

// chat is a chat file being read: its messages by id, in order, as
// Gemini CLI keeps them while it reads one.
type chat struct {
	order []string
	msgs  map[string]message
	meta  Chat
	hash  bool // a projectHash was seen
}

// message is what a message of a chat file gives.
type message struct {
	entry     contract.StateEntry // Text "" for none
	resumable bool
}

// put adds the message of id, or replaces it where it was.
func (c *chat) put(id string, e message) {
	if _, ok := c.msgs[id]; !ok {
		c.order = append(c.order, id)
	}
	c.msgs[id] = e
}

// rewind drops the message of id and every one after it; all of them
// when there is none of id.
func (c *chat) rewind(id string) {
	i := len(c.order)
	for k, o := range c.order {
		if o == id {
			i = k
			break
		}
	}
	if i == len(c.order) {
		i = 0
	}
	for _, o := range c.order[i:] {
		delete(c.msgs, o)
	}
	c.order = c.order[:i]
}

// meta takes a metadata record's fields.
func (c *chat) takeMeta(r record) {
	if r.SessionID != nil {
		c.meta.SessionID = *r.SessionID
	}
	if r.LastUpdated != nil {
		c.meta.LastUpdated = *r.LastUpdated
	}
	if r.ProjectHash != nil {
		c.hash = true
	}
}

// Parse reads a chat file from r, at most max bytes, as Gemini CLI
// 0.61.0 reads one to load its session, and returns its session and
// what was said in it, in order: each user message an entry of the
// user's (its text parts; those Gemini doesn't send the model again,
// its own session context and lines that begin "/" or "?", passed
// over), each gemini message with text an entry of the agent's (its
// thoughts and tool calls passed over), the message's timestamp its
// time. A later line of a message's id replaces it, a $set of messages
// replaces all of them, a $rewindTo drops its message and those after.
// A line that isn't a JSON object, or a message whose content is
// neither text nor parts, is refused, naming its number and the rule.
func Parse(ctx context.Context, r io.Reader, max int64) (Chat, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, max+1), 64<<10)
	c := &chat{msgs: map[string]message{}}
	var read int64
	for n := 1; ; n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return Chat{}, fmt.Errorf("line %d: %w", n, err)
			}
		}
		raw, err := br.ReadBytes('\n')
		read += int64(len(raw))
		if read > max {
			return Chat{}, fmt.Errorf("the file is over the %d bytes read", max)
		}
		if err != nil && err != io.EOF {
			return Chat{}, err
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if perr := c.line(raw); perr != nil {
				return Chat{}, fmt.Errorf("line %d: %w", n, perr)
			}
		}
		if err == io.EOF {
			break
		}
	}
	out := c.meta
	if out.SessionID == "" || !c.hash {
		return Chat{}, nil // not a session's file, as Gemini reads one
	}
	size := 0
	for _, id := range c.order {
		m := c.msgs[id]
		out.Resumable = out.Resumable || m.resumable
		e := m.entry
		if e.Text == "" {
			continue
		}
		if len(out.Entries) == contract.MaxStateEntries {
			return Chat{}, fmt.Errorf("over a conversation's %d entries", contract.MaxStateEntries)
		}
		if size += len(e.Text); size > contract.MaxStateDocument {
			return Chat{}, fmt.Errorf("what was said is over a state document's %d bytes", contract.MaxStateDocument)
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

// line reads one line of a chat file into c.
func (c *chat) line(raw []byte) error {
	var r record
	if err := json.Unmarshal(raw, &r); err != nil || bytes.TrimSpace(raw)[0] != '{' {
		return fmt.Errorf("not a JSON object as a chat file's lines are")
	}
	switch {
	case r.RewindTo != nil:
		c.rewind(*r.RewindTo)
	case r.ID != nil:
		e, err := entry(r)
		if err != nil {
			return err
		}
		c.put(*r.ID, e)
	case len(r.Set) > 0 && r.Set[0] == '{':
		var set record
		if err := json.Unmarshal(r.Set, &set); err != nil {
			return fmt.Errorf("a $set is not an object of metadata")
		}
		if len(set.Messages) > 0 && set.Messages[0] == '[' {
			c.order, c.msgs = nil, map[string]message{}
			if err := c.messages(set.Messages); err != nil {
				return err
			}
		}
		c.takeMeta(set)
	case r.SessionID != nil && r.ProjectHash != nil:
		c.takeMeta(r)
		if len(r.Messages) > 0 && r.Messages[0] == '[' {
			return c.messages(r.Messages)
		}
	}
	return nil
}

// messages adds each message of a list a line holds.
func (c *chat) messages(raw json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("messages are not a list")
	}
	for _, m := range list {
		var r record
		if json.Unmarshal(m, &r) != nil || r.ID == nil {
			continue // not a message, as Gemini passes it over
		}
		e, err := entry(r)
		if err != nil {
			return err
		}
		c.put(*r.ID, e)
	}
	return nil
}

// entry is what a message gives: its entry (Text "" for none), and
// whether Gemini CLI takes it for one to load a session by.
func entry(r record) (message, error) {
	var m message
	e := &m.entry
	text, err := partsText(r.Content)
	if err != nil {
		return m, fmt.Errorf("a %s message's content: %w", r.Type, err)
	}
	switch r.Type {
	case "user":
		if ignored(text) {
			return m, nil
		}
		m.resumable = true
		e.Role = contract.RoleUser
		if shown, err := partsText(r.DisplayContent); err == nil && !ignored(shown) {
			text = shown
		}
	case "gemini":
		m.resumable = strings.TrimSpace(text) != "" || nonEmptyList(r.Thoughts) || nonEmptyList(r.ToolCalls)
		e.Role = contract.RoleAgent
	default:
		return m, nil
	}
	e.Text = text
	if t, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil {
		t = t.UTC()
		e.Time = &t
	}
	return m, nil
}

// nonEmptyList says whether raw is a list with something in it.
func nonEmptyList(raw json.RawMessage) bool {
	var list []json.RawMessage
	return json.Unmarshal(raw, &list) == nil && len(list) > 0
}

// ignored says whether a user message's text is one Gemini CLI sends the
// model no more once a session is loaded: none, its own context, or a
// command.
func ignored(text string) bool {
	t := strings.TrimSpace(text)
	return t == "" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "?") ||
		strings.HasPrefix(t, "<session_context>") || strings.HasPrefix(t, "<hook_context>")
}

// partsText is the text of content: a string, a part or a list of parts,
// their text joined, thoughts left out; "" for none.
func partsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("not text")
		}
		return s, nil
	case '{':
		raw = append(append([]byte{'['}, raw...), ']')
	case '[':
	default:
		return "", fmt.Errorf("neither text nor parts")
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("neither text nor parts")
	}
	var b strings.Builder
	for _, pr := range parts {
		var s string
		if json.Unmarshal(pr, &s) == nil {
			b.WriteString(s)
			continue
		}
		var p part
		if json.Unmarshal(pr, &p) != nil {
			return "", fmt.Errorf("a part is neither text nor an object")
		}
		if p.Text != nil && !p.Thought {
			b.WriteString(*p.Text)
		}
	}
	return b.String(), nil
}

// stamp is a time as Gemini CLI writes it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ProjectHash is the hash Gemini CLI writes of a project's folder.
func ProjectHash(cwd string) string {
	h := sha256.Sum256([]byte(cwd))
	return hex.EncodeToString(h[:])
}

// Write is entries as the lines of a Gemini CLI chat file for session,
// run in cwd, made at now: its metadata, then a message of each entry
// (the user's with its text a part, the agent's as gemini's text); a
// user entry from someone other than the owner has who written into its
// text (as the hub writes it into a prompt), an entry with no time is at
// now.
func Write(entries []contract.StateEntry, session, cwd string, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	start := now
	if len(entries) > 0 && entries[0].Time != nil {
		start = *entries[0].Time
	}
	meta := map[string]any{
		"sessionId":   session,
		"projectHash": ProjectHash(cwd),
		"startTime":   stamp(start),
		"lastUpdated": stamp(now),
		"kind":        "main",
	}
	if err := enc.Encode(meta); err != nil {
		return nil, err
	}
	for i, e := range entries {
		at := now
		if e.Time != nil {
			at = *e.Time
		}
		m := map[string]any{"id": newUUID(), "timestamp": stamp(at)}
		switch e.Role {
		case contract.RoleUser:
			m["type"] = "user"
			m["content"] = []map[string]string{{"text": hub.SenderText(e)}}
		case contract.RoleAgent:
			m["type"] = "gemini"
			m["content"] = e.Text
			m["thoughts"] = []any{}
		default:
			return nil, fmt.Errorf("entry %d: role %q is neither user nor agent", i, e.Role)
		}
		if err := enc.Encode(m); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
