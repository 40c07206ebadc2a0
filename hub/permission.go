package hub

import "encoding/json"

// PermissionOption is one option of session/request_permission.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// bypassPermissions is the option Claude Code lists first as it leaves
// plan mode: taking it switches the session to skip every later question
// for good, which is more than the one permission asked.
const bypassPermissions = "bypassPermissions"

// FirstAllow chooses the first option that allows (allow_once or
// allow_always), passing over Claude Code's bypassPermissions when
// another option allows (docs/decisions/029-hub.md says why); ok is false when
// none allows.
func FirstAllow(options []PermissionOption) (optionID string, ok bool) {
	for _, skipBypass := range []bool{true, false} {
		for _, o := range options {
			if o.Kind != "allow_once" && o.Kind != "allow_always" {
				continue
			}
			if skipBypass && o.OptionID == bypassPermissions {
				continue
			}
			return o.OptionID, true
		}
	}
	return "", false
}

// permissionParams are session/request_permission's params, as far as
// the hub reads them.
type permissionParams struct {
	SessionID string             `json:"sessionId"`
	Options   []PermissionOption `json:"options"`
}

// outcome is session/request_permission's answer.
type outcome struct {
	Outcome outcomeBody `json:"outcome"`
}

type outcomeBody struct {
	Outcome  string `json:"outcome"` // selected or cancelled
	OptionID string `json:"optionId,omitempty"`
}

// answerPermission is the answer to a permission request: the option
// FirstAllow chooses, or cancelled when the turn was cancelled or no
// option allows.
func answerPermission(params json.RawMessage, cancelled func(session string) bool) (outcome, string) {
	var p permissionParams
	if json.Unmarshal(params, &p) != nil {
		return outcome{outcomeBody{Outcome: "cancelled"}}, ""
	}
	if cancelled(p.SessionID) {
		return outcome{outcomeBody{Outcome: "cancelled"}}, p.SessionID
	}
	id, ok := FirstAllow(p.Options)
	if !ok {
		return outcome{outcomeBody{Outcome: "cancelled"}}, p.SessionID
	}
	return outcome{outcomeBody{Outcome: "selected", OptionID: id}}, p.SessionID
}
