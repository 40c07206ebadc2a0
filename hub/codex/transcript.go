package codex

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

// line is what an export reads of a rollout's line.
type line struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// event is an event_msg line's payload, as far as an export reads it.
type event struct {
	Type        string            `json:"type"`
	Message     *string           `json:"message"`
	Images      []json.RawMessage `json:"images"`
	LocalImages []json.RawMessage `json:"local_images"`
}

// Parse reads a rollout from r, at most max bytes, and returns what was
// said in it, in order: each user_message event a user entry (its
// images named "[image]"), each agent_message event an agent entry, the
// line's timestamp its time. Passed over: the session's meta, the
// response items (what the model is sent, instructions and environment
// included), reasoning, tool calls and their output, and every other
// event. A line that isn't a JSON object, or a user_message or
// agent_message event whose message isn't a string, is refused, naming
// its number and the rule.
func Parse(ctx context.Context, r io.Reader, max int64) ([]contract.StateEntry, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, max+1), 64<<10)
	var out []contract.StateEntry
	var read int64
	size := 0
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
			e, ok, perr := parseLine(raw)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
			if ok && e.Text != "" {
				if len(out) == contract.MaxStateEntries {
					return nil, fmt.Errorf("line %d: over a conversation's %d entries", n, contract.MaxStateEntries)
				}
				size += len(e.Text)
				if size > contract.MaxStateDocument {
					return nil, fmt.Errorf("line %d: what was said is over a state document's %d bytes", n, contract.MaxStateDocument)
				}
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// parseLine reads one line: the entry it says, if any (ok).
func parseLine(raw []byte) (e contract.StateEntry, ok bool, err error) {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil || raw[firstByte(raw)] != '{' {
		return e, false, fmt.Errorf("not a JSON object")
	}
	if l.Type != "event_msg" {
		return e, false, nil
	}
	var ev event
	if err := json.Unmarshal(l.Payload, &ev); err != nil || len(l.Payload) == 0 || l.Payload[0] != '{' {
		return e, false, fmt.Errorf("an event_msg's payload is not an object")
	}
	switch ev.Type {
	case "user_message":
		e.Role = contract.RoleUser
	case "agent_message":
		e.Role = contract.RoleAgent
	default:
		return e, false, nil
	}
	if ev.Message == nil {
		return e, false, fmt.Errorf("a %s event's message is not a string", ev.Type)
	}
	parts := []string{}
	if *ev.Message != "" {
		parts = append(parts, *ev.Message)
	}
	if e.Role == contract.RoleUser {
		for range len(ev.Images) + len(ev.LocalImages) {
			parts = append(parts, "[image]")
		}
	}
	e.Text = strings.Join(parts, "\n")
	if t, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
		t = t.UTC()
		e.Time = &t
	}
	return e, true, nil
}

// firstByte is the index of raw's first byte that isn't white space.
func firstByte(raw []byte) int {
	return len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
}

// stamp is a time as Codex writes it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Write is entries as the lines of a Codex rollout for session, run in
// cwd, made at now: its session_meta, then for each entry the response
// item the model is sent again on a resume and the event the user saw
// (user_message, agent_message); a user entry from someone other than
// the owner has who written into its text (as the hub writes it into a
// prompt), an entry with no time is at now.
func Write(entries []contract.StateEntry, session, cwd string, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(at time.Time, typ string, payload any) error {
		return enc.Encode(map[string]any{"timestamp": stamp(at), "type": typ, "payload": payload})
	}
	meta := map[string]any{
		"id":          session,
		"timestamp":   stamp(now),
		"cwd":         cwd,
		"originator":  "link_import",
		"cli_version": "0.0.0",
		"source":      "unknown",
	}
	if err := put(now, "session_meta", meta); err != nil {
		return nil, err
	}
	for i, e := range entries {
		at := now
		if e.Time != nil {
			at = *e.Time
		}
		var item, ev map[string]any
		switch e.Role {
		case contract.RoleUser:
			text := hub.SenderText(e)
			item = map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": text}}}
			ev = map[string]any{"type": "user_message", "message": text, "images": []any{}, "local_images": []any{}, "text_elements": []any{}}
		case contract.RoleAgent:
			item = map[string]any{"type": "message", "role": "assistant", "content": []map[string]string{{"type": "output_text", "text": e.Text}}}
			ev = map[string]any{"type": "agent_message", "message": e.Text}
		default:
			return nil, fmt.Errorf("entry %d: role %q is neither user nor agent", i, e.Role)
		}
		if err := put(at, "response_item", item); err != nil {
			return nil, err
		}
		if err := put(at, "event_msg", ev); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
