package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Agent state: the methods that move an agent's conversations out of one
// harness and into another (docs/agent-state.md), each asked on a
// connection opened as a message's is.
const (
	MethodStateExport = "_link/state/export" // request: the agent's state, a StateDocument
	MethodStateImport = "_link/state/import" // request: a StateDocument taken in
)

// StateVersion is the version of the state document this package reads
// and writes.
const StateVersion = 1

// StateKindConversations is the kind of state a document holds today: the
// agent's conversations, each under its thread. A harness answers kind by
// kind, naming in Refused each it takes or gives none of.
const StateKindConversations = "conversations"

// Bounds of a state document.
const (
	// MaxStateDocument bounds an import's params, in bytes: well inside a
	// message's frame (acp.MaxMessage), so one too big is refused with
	// this rule rather than by the connection's end.
	MaxStateDocument = 16 << 20
	// MaxStateConversations bounds the conversations of one document.
	MaxStateConversations = 1024
	// MaxStateEntries bounds the entries of one conversation.
	MaxStateEntries = 1 << 16
)

// Roles of a state entry.
const (
	RoleUser  = "user"  // a message: the owner's, or from's
	RoleAgent = "agent" // an answer of the agent's
)

// StateDocument is an agent's state as one harness gives it and another
// takes it in: the answer of _link/state/export and the params of
// _link/state/import.
type StateDocument struct {
	Version       int                 `json:"version"`
	Conversations []StateConversation `json:"conversations"`
	// Refused names, in an export's answer, each kind the harness gives
	// none of and why. An import reads nothing of it.
	Refused map[string]string `json:"refused,omitempty"`
	// Failed names, in an export's answer, each thread whose conversation
	// couldn't be read (its files refused, or its session/load failed)
	// and why; the others are given. An import reads nothing of it.
	Failed map[string]string `json:"failed,omitempty"`
}

// StateConversation is one conversation: its thread, and what was said
// in it, in order.
type StateConversation struct {
	Thread  string       `json:"thread"`
	Entries []StateEntry `json:"entries"`
}

// StateEntry is one message or answer of a conversation.
type StateEntry struct {
	Role string `json:"role"` // user or agent
	Text string `json:"text"`
	// Time is when it was said, when the harness knows.
	Time *time.Time `json:"time,omitempty"`
	// From and FromName are a user entry's sender when not the owner, as
	// _meta.link says them.
	From     string `json:"from,omitempty"`
	FromName string `json:"fromName,omitempty"`
}

// StateExportParams are _link/state/export's params: the threads to
// give, every one when none are named.
type StateExportParams struct {
	Threads []string `json:"threads,omitempty"`
}

// StateImportResult is _link/state/import's answer: each conversation
// taken in, under the thread it is now, and each kind refused.
type StateImportResult struct {
	Conversations []ImportedConversation `json:"conversations"`
	Refused       map[string]string      `json:"refused,omitempty"`
}

// ImportedConversation is one conversation an import took in: From is
// its thread in the document, Thread the one it is under now.
type ImportedConversation struct {
	From   string `json:"from"`
	Thread string `json:"thread"`
}

// ParseStateExportParams reads _link/state/export's params: absent, null,
// {} or {"threads": [...]}, each a thread named once, at most
// MaxStateConversations of them.
func ParseStateExportParams(raw json.RawMessage) (StateExportParams, error) {
	var p StateExportParams
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	if err := strict(raw, &p); err != nil {
		return p, refuse("export", "params are {} or {\"threads\": [thread, ...]}: %v", err)
	}
	if len(p.Threads) > MaxStateConversations {
		return p, refuse("threads", "an export names at most %d threads", MaxStateConversations)
	}
	seen := make(map[string]bool, len(p.Threads))
	for _, t := range p.Threads {
		if err := CheckThread(t); err != nil {
			return p, err
		}
		if seen[t] {
			// Its document would hold the thread twice, which no import takes.
			return p, refuse("threads", "an export names each thread once: %s is named twice", t)
		}
		seen[t] = true
	}
	return p, nil
}

// ParseStateDocument reads an import's document, refusing, with the rule
// it broke, one over MaxStateDocument bytes, of another version, with a
// member this version doesn't have, a thread twice, or an entry that
// isn't a user's or agent's text (a sender checked as _meta.link's).
func ParseStateDocument(raw json.RawMessage) (StateDocument, error) {
	var doc StateDocument
	if len(raw) > MaxStateDocument {
		return doc, refuse("import", "a state document is at most %d bytes; this one is %d (export and import fewer threads at a time)", MaxStateDocument, len(raw))
	}
	if err := strict(bytes.TrimSpace(raw), &doc); err != nil {
		return doc, refuse("import", "the params are a state document (docs/agent-state.md): %v", err)
	}
	if doc.Version != StateVersion {
		return doc, refuse("version", "a state document's version is %d, not %d", StateVersion, doc.Version)
	}
	if doc.Conversations == nil {
		return doc, refuse("conversations", "a state document lists its conversations, [] for none")
	}
	if len(doc.Conversations) > MaxStateConversations {
		return doc, refuse("conversations", "a state document holds at most %d conversations", MaxStateConversations)
	}
	seen := make(map[string]bool, len(doc.Conversations))
	for i, c := range doc.Conversations {
		if err := CheckThread(c.Thread); err != nil {
			return doc, fmt.Errorf("conversation %d: %w", i+1, err)
		}
		if seen[c.Thread] {
			return doc, refuse("thread", "conversation %d: the thread %s is in the document twice", i+1, c.Thread)
		}
		seen[c.Thread] = true
		if len(c.Entries) == 0 {
			return doc, refuse("entries", "conversation %s: a conversation has at least one entry", c.Thread)
		}
		if len(c.Entries) > MaxStateEntries {
			return doc, refuse("entries", "conversation %s: a conversation has at most %d entries", c.Thread, MaxStateEntries)
		}
		for j, e := range c.Entries {
			if err := checkEntry(e); err != nil {
				return doc, fmt.Errorf("conversation %s, entry %d: %w", c.Thread, j+1, err)
			}
		}
	}
	return doc, nil
}

// checkEntry checks one entry of a conversation.
func checkEntry(e StateEntry) error {
	switch e.Role {
	case RoleUser:
	case RoleAgent:
		if e.From != "" || e.FromName != "" {
			return refuse("from", "an agent entry has no from: only a message has a sender")
		}
	default:
		return refuse("role", "an entry's role is %q or %q, not %q", RoleUser, RoleAgent, truncate(e.Role, 32))
	}
	if e.Text == "" {
		return refuse("text", "an entry's text is not empty")
	}
	if e.From != "" {
		if err := CheckFrom(e.From); err != nil {
			return err
		}
	}
	if e.FromName != "" {
		if e.From == "" {
			return refuse("fromName", "fromName is said only with from")
		}
		if err := CheckFromName(e.FromName); err != nil {
			return err
		}
	}
	return nil
}

// strict decodes raw, one JSON value, into v, refusing a member v has no
// field for.
func strict(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more follows the JSON value")
	}
	return nil
}
