package contract

import (
	"bytes"
	"encoding/json"
)

// RecoverParams are _link/recover's params: empty or {} for the single
// phase; two_phase asks for ids; done lets answers with those ids go.
type RecoverParams struct {
	TwoPhase bool     `json:"two_phase,omitempty"`
	Done     []string `json:"done,omitempty"`
}

// RecoverResult is _link/recover's answer: a page of the answers kept,
// at most MaxRecoverResult bytes encoded; its Meta says when it left
// some out.
type RecoverResult struct {
	Answers []RecoveredAnswer `json:"answers"`
	Meta    *RecoverMeta      `json:"_meta,omitempty"`
}

// RecoverMeta is a recover result's _meta: what Link adds.
type RecoverMeta struct {
	Link RecoverLink `json:"link"`
}

// RecoverLink is a recover result's _meta.link.
type RecoverLink struct {
	// More says the result left answers out, to a frame's bound: they
	// come at the next ask (two-phase, once this page's are done).
	More bool `json:"more,omitempty"`
}

// More says whether r left answers out for a later ask.
func (r RecoverResult) More() bool { return r.Meta != nil && r.Meta.Link.More }

// MaxFrame is the most Link's bridge reads of one message: the JSON-RPC
// message whole, its envelope and escapes counted.
const MaxFrame = 16 << 20

// MaxRecoverID bounds the id of a _link/recover request, in bytes as
// sent: its response carries it back, inside MaxFrame.
const MaxRecoverID = 256

// MaxRecoverResult bounds _link/recover's result as encoded: MaxFrame
// less the response's envelope, {"jsonrpc":"2.0","id":ID,"result":...},
// with an id of MaxRecoverID bytes.
const MaxRecoverResult = MaxFrame - len(`{"jsonrpc":"2.0","id":,"result":}`) - MaxRecoverID

// CheckRecoverID refuses the id of a _link/recover request longer than
// MaxRecoverID, whose response could pass MaxFrame.
func CheckRecoverID(id []byte) error {
	if len(id) > MaxRecoverID {
		return refuse("recover", "a _link/recover request's id is at most %d bytes, so its answer fits a %d-byte message", MaxRecoverID, MaxFrame)
	}
	return nil
}

// RecoveredAnswer is one answer nobody took: its thread and text, and in
// the two-phase form its opaque id.
type RecoveredAnswer struct {
	ID     string `json:"id,omitempty"`
	Thread string `json:"thread"`
	Text   string `json:"text"`
}

// MaxDone bounds the ids one done request lets go.
const MaxDone = 4096

// ParseRecoverParams reads _link/recover's params: absent, null or an
// object with two_phase (a boolean) and done (a list of strings). Any
// other key is refused, naming it: a misspelt two_phase would otherwise
// ask for the single phase, which hands answers over and forgets them.
func ParseRecoverParams(raw json.RawMessage) (RecoverParams, error) {
	raw = bytes.TrimSpace(raw)
	var p RecoverParams
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return p, refuse("recover", "params are an object: {}, {\"two_phase\": true} or {\"done\": [ids]}")
	}
	for key := range fields {
		if key != "two_phase" && key != "done" {
			return p, refuse("recover", "%q is not one of _link/recover's params: two_phase, done", truncate(key, 32))
		}
	}
	if v, ok := fields["two_phase"]; ok {
		if err := parseBool(v, "two_phase", &p.TwoPhase); err != nil {
			return p, err
		}
	}
	if v, ok := fields["done"]; ok {
		if err := json.Unmarshal(v, &p.Done); err != nil {
			return p, refuse("done", "done is a list of ids, each a string")
		}
		if len(p.Done) > MaxDone {
			return p, refuse("done", "done is at most %d ids", MaxDone)
		}
	}
	return p, nil
}

// TakenParams are _link/taken's: the session whose message was had.
type TakenParams struct {
	SessionID string `json:"sessionId"`
}
