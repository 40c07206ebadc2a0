package contract

import (
	"bytes"
	"encoding/json"
	"time"
)

// A message sent once: a sender on the owner's machine (Link's scheduler,
// a background command's end) records each message durably before it
// sends it, and after a crash of either side sends it again, not knowing
// whether the harness stored it. It says the message's id in the prompt's
// _meta under MessageMeta (beside "link", whose keys Link fixes); Link
// Harness records the id with the message's event and answers a message
// whose id it holds already with CodeAlreadyReceived, storing nothing and
// running no turn.

// MessageMeta is the prompt's _meta key of a message sent once:
// {"id": "<id>", "since": "<RFC 3339>", "recover": true}.
const MessageMeta = "link.local/message"

// CodeAlreadyReceived is the JSON-RPC error code of a prompt whose
// message id the harness stored already: nothing is stored again, no
// turn runs, and the first's answer went where it goes (to its caller,
// else kept for _link/recover). Its data is AlreadyReceived.
const CodeAlreadyReceived = -32010

// MaxMessageID bounds a message id, in bytes.
const MaxMessageID = 128

// MessageOnce is what a prompt's MessageMeta says.
type MessageOnce struct {
	// ID names the message among every message sent to the agent: 1 to
	// MaxMessageID letters, digits or -._:/@+=.
	ID string `json:"id"`
	// Since is when the sender first recorded the message: it was stored,
	// if it was, no earlier, so the harness looks for the id among the
	// events written since then alone (less a margin for the clock).
	Since time.Time `json:"since"`
	// Recover: the turn's answer is never streamed to this caller but
	// kept for _link/recover from the start, as a caller gone's is: so
	// lnk agent chat shows a link: thread's and Link's bridge takes
	// another's to its chat. The sender, a reminder's, lets the
	// connection go once the harness has the message (_link/taken).
	Recover bool `json:"recover,omitempty"`
}

// AlreadyReceived is the data of a CodeAlreadyReceived error: the id and
// the event the message was stored as.
type AlreadyReceived struct {
	ID  string `json:"id"`
	Seq int64  `json:"seq"`
}

// CheckMessageID checks a message id: 1 to MaxMessageID letters, digits
// or -._:/@+=.
func CheckMessageID(id string) error {
	if len(id) > MaxMessageID || !isID(id) {
		return refuse(MessageMeta, "a message id is 1 to %d letters, digits or -._:/@+=", MaxMessageID)
	}
	return nil
}

// ParseMessageOnce reads the MessageMeta of a prompt's _meta. A _meta
// without it says none (ok false); one that isn't an object with a good
// id, an RFC 3339 since and at most recover, a boolean, is refused naming
// the rule.
func ParseMessageOnce(meta json.RawMessage) (m MessageOnce, ok bool, err error) {
	meta = bytes.TrimSpace(meta)
	if len(meta) == 0 || string(meta) == "null" {
		return m, false, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(meta, &all); err != nil {
		return m, false, refuse("_meta", "_meta is an object")
	}
	raw, ok := all[MessageMeta]
	if !ok {
		return m, false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return m, false, refuse(MessageMeta, "%s is an object: {\"id\", \"since\"}", MessageMeta)
	}
	for key := range fields {
		if key != "id" && key != "since" && key != "recover" {
			return m, false, refuse(MessageMeta, "%q is not one of %s's: id, since, recover", truncate(key, 32), MessageMeta)
		}
	}
	if err := parseString(fields["id"], "id", &m.ID, CheckMessageID); err != nil {
		return m, false, refuse(MessageMeta, "a message id is a string of 1 to %d letters, digits or -._:/@+=", MaxMessageID)
	}
	var since string
	if json.Unmarshal(fields["since"], &since) != nil {
		return m, false, refuse(MessageMeta, "since is when the message was first recorded, an RFC 3339 time")
	}
	t, perr := time.Parse(time.RFC3339Nano, since)
	if perr != nil || t.UTC().Year() < 1970 || t.UTC().Year() > 9999 {
		return m, false, refuse(MessageMeta, "since is when the message was first recorded, an RFC 3339 time")
	}
	m.Since = t.UTC()
	if v, ok := fields["recover"]; ok {
		if err := parseBool(v, "recover", &m.Recover); err != nil {
			return m, false, refuse(MessageMeta, "recover is true or false")
		}
	}
	return m, true, nil
}
