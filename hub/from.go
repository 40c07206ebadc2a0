package hub

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lnk-dev/link/contract"
)

// fromLine is the line a message from someone other than the owner
// starts with: who, by name when they have one, and its hops.
func fromLine(s contract.LinkMeta) string {
	who := s.From
	if s.FromName != "" {
		who = s.FromName + " (" + s.From + ")"
	}
	return fmt.Sprintf("Message from %s, hops %d:", who, s.Hops)
}

// quote is text with each of its lines quoted ("> ").
func quote(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

// exactType is a block's type read by its exact name, as a harness not
// in Go may read it, where Go's reader folds case ("tYpe") and takes the
// last of a name. A block either reads as text is written as text by the
// exact names, which sort after any other case of them, so Go's reader
// takes them too: whichever way a harness reads the prompt, the sender's
// line comes first and no line of the text is unquoted.
func exactType(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	var typ string
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(m["type"], &typ) != nil {
		return ""
	}
	return typ
}

// writeSender is a prompt's content blocks with its sender written into
// its text, for a harness that reads no _meta: a line of its own saying
// who and the hops, then each of their lines quoted. Blocks other than
// text go on as they came.
func writeSender(prompt json.RawMessage, s contract.LinkMeta) ([]byte, error) {
	var blocks []json.RawMessage
	if err := json.Unmarshal(prompt, &blocks); err != nil {
		return nil, err
	}
	header := fromLine(s)
	headed := false
	for i, raw := range blocks {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" && exactType(raw) != "text" {
			continue
		}
		text := quote(b.Text)
		if !headed {
			text = header + "\n" + text
			headed = true
		}
		out, err := setMember(raw, "text", appendString(nil, text))
		if err == nil {
			out, err = setMember(out, "type", []byte(`"text"`))
		}
		if err != nil {
			return nil, err
		}
		blocks[i] = out
	}
	if !headed {
		first, _ := json.Marshal(map[string]string{"type": "text", "text": header})
		blocks = append([]json.RawMessage{first}, blocks...)
	}
	return mustArray(blocks), nil
}
