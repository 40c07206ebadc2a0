package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
)

// line is what an export reads of a line of a session file.
type line struct {
	Type        string          `json:"type"`
	UUID        string          `json:"uuid"`
	Timestamp   string          `json:"timestamp"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	IsSummary   bool            `json:"isCompactSummary"`
	Transcript  bool            `json:"isVisibleInTranscriptOnly"`
	Message     json.RawMessage `json:"message"`
}

// message is a line's Anthropic API message.
type message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// block is one content block of a message.
type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Parse reads a session file from r, at most max bytes, and returns
// what was said in it, in order: each user message a user entry (its
// text blocks, an image named "[image]"), each assistant message's text
// an agent entry (the lines of one message, by its id, one entry).
// Passed over: lines of other types, sidechains (subagents), meta lines,
// compaction summaries, tool results, thinking, tool calls, and the
// lines Claude Code writes for a local command (<command-name>,
// <local-command-stdout>...). A line that isn't a JSON object, or a user
// or assistant line whose message isn't one, is refused, naming its
// number and the rule.
func Parse(ctx context.Context, r io.Reader, max int64) ([]contract.StateEntry, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, max+1), 64<<10)
	var out []contract.StateEntry
	var read int64
	size := 0
	seen := map[string]bool{}
	lastID := "" // the message id of the agent entry last added
	for n := 1; ; n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
		}
		raw, err := br.ReadBytes('\n')
		read += int64(len(raw))
		if read > max {
			return nil, fmt.Errorf("the file is over the %d bytes read", max)
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			e, id, ok, perr := parseLine(raw, seen)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
			if ok {
				k := len(out)
				if e.Role == contract.RoleAgent && id != "" && k > 0 && out[k-1].Role == contract.RoleAgent && id == lastID {
					sep := ""
					if out[k-1].Text != "" && e.Text != "" {
						sep = "\n\n"
					}
					out[k-1].Text += sep + e.Text
				} else {
					if len(out) == contract.MaxStateEntries {
						return nil, fmt.Errorf("line %d: over a conversation's %d entries", n, contract.MaxStateEntries)
					}
					out = append(out, e)
				}
				if e.Role == contract.RoleAgent {
					lastID = id
				} else {
					lastID = ""
				}
				size += len(e.Text)
				if size > contract.MaxStateDocument {
					return nil, fmt.Errorf("line %d: what was said is over a state document's %d bytes", n, contract.MaxStateDocument)
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e.Text != "" {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// parseLine reads one line: the entry it says, if any (ok), and for an
// assistant line its message's id.
func parseLine(raw []byte, seen map[string]bool) (e contract.StateEntry, id string, ok bool, err error) {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return e, "", false, fmt.Errorf("not a JSON object: %w", err)
	}
	if l.Type != "user" && l.Type != "assistant" {
		return e, "", false, nil
	}
	var m message
	if err := json.Unmarshal(l.Message, &m); err != nil || len(l.Message) == 0 || l.Message[0] != '{' {
		return e, "", false, fmt.Errorf("a %s line's message is not an object", l.Type)
	}
	if l.UUID != "" {
		if seen[l.UUID] {
			return e, "", false, nil // written twice
		}
		seen[l.UUID] = true
	}
	if l.IsSidechain || l.IsMeta || l.IsSummary || l.Transcript {
		return e, "", false, nil
	}
	role := contract.RoleUser
	if l.Type == "assistant" {
		role = contract.RoleAgent
	}
	text, err := contentText(m.Content, role)
	if err != nil {
		return e, "", false, fmt.Errorf("a %s line's content: %w", l.Type, err)
	}
	if role == contract.RoleUser && localCommand(text) {
		return e, "", false, nil
	}
	e = contract.StateEntry{Role: role, Text: text}
	if t, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
		t = t.UTC()
		e.Time = &t
	}
	return e, m.ID, true, nil
}

// contentText is the text of a message's content: a string, or its
// blocks' (text blocks; for a user's, "[image]" for an image), joined by
// newlines. Tool calls and results, thinking and the rest say nothing.
func contentText(raw json.RawMessage, role string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var blocks []block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", fmt.Errorf("neither a string nor blocks")
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "text" && b.Text != "" && !(role == contract.RoleUser && interrupted(b.Text)):
			parts = append(parts, b.Text)
		case b.Type == "image" && role == contract.RoleUser:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n"), nil
}

// interrupted says whether text is the note Claude Code writes as the
// user's when a turn is cancelled.
func interrupted(text string) bool {
	return strings.HasPrefix(text, "[Request interrupted by user")
}

// localCommand says whether a user line's text is one Claude Code writes
// for a local command (/model, /clear): its name, or what it printed.
func localCommand(text string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// importModel is the model an imported answer says it came from: none
// of Claude's, since another harness's model gave it.
const importModel = "link-import"

// Write is entries as the lines of a Claude Code session file for
// session, run in cwd: each a user or assistant line linked to the one
// before, a user entry from someone other than the owner with who in its
// text (as the hub writes it into a prompt), an entry with no time at
// now. Each line's time is at least a millisecond after the line's
// before it: Claude Code, loading a session whose answer had its
// message's millisecond (as a fast model's can), put "No response
// requested." in the answer's place.
func Write(entries []contract.StateEntry, session, cwd string, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var parent any // null for the first
	var last time.Time
	for i, e := range entries {
		t := now
		if e.Time != nil {
			t = *e.Time
		}
		t = t.Truncate(time.Millisecond)
		if i > 0 && !t.After(last) {
			t = last.Add(time.Millisecond)
		}
		last = t
		id := newUUID()
		l := map[string]any{
			"parentUuid":  parent,
			"isSidechain": false,
			"userType":    "external",
			"cwd":         cwd,
			"sessionId":   session,
			"uuid":        id,
			"timestamp":   t.UTC().Format("2006-01-02T15:04:05.000Z"),
		}
		switch e.Role {
		case contract.RoleUser:
			l["type"] = "user"
			l["message"] = map[string]any{"role": "user", "content": hub.SenderText(e)}
		case contract.RoleAgent:
			l["type"] = "assistant"
			l["message"] = map[string]any{
				"id":            fmt.Sprintf("msg_link_import_%d", i),
				"type":          "message",
				"role":          "assistant",
				"model":         importModel,
				"content":       []block{{Type: "text", Text: e.Text}},
				"stop_reason":   "end_turn",
				"stop_sequence": nil,
				"usage":         map[string]int{"input_tokens": 0, "output_tokens": 0},
			}
		default:
			return nil, fmt.Errorf("entry %d: role %q is neither user nor agent", i, e.Role)
		}
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
		parent = id
	}
	return buf.Bytes(), nil
}
