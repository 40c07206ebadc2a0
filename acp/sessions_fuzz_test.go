package acp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzEditorParams proves session/list's and session/set_config_option's
// params, from an editor, never panic their readers, are refused naming a
// rule, and that what they read is what was sent: an absolute cwd, and a
// string value.
func FuzzEditorParams(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"cwd":"/work","cursor":"ZGlzY29yZDox"}`, `{"cwd":"work"}`, `{"cwd":null,"cursor":null}`,
		`{"sessionId":"discord:1","configId":"model","value":"anthropic/claude-sonnet-5"}`,
		`{"sessionId":"discord:1","configId":"brave","type":"boolean","value":true}`,
		`{"configId":"model"}`, `[]`, `"x"`, `{"cwd":7}`, `{"cwd":"C:\\Users\\ada"}`, `{"cwd":"c:/x"}`, `{"cwd":"\\\\server\\share"}`, `{"cwd":"C:x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) {
			return // DecodeMessage refused it first
		}
		ruled := func(err error) {
			var re *contract.RuleError
			if !errors.As(err, &re) || re.Rule == "" {
				t.Fatalf("%s refused naming no rule: %v", params, err)
			}
		}
		if cwd, _, err := parseListParams(params); err != nil {
			ruled(err)
		} else if !absolute(cwd) {
			t.Fatalf("%s read as cwd %q", params, cwd)
		}
		session, id, value, err := parseSetConfigParams(params)
		if err != nil {
			ruled(err)
			return
		}
		var p struct {
			SessionID *string `json:"sessionId"`
			ConfigID  string  `json:"configId"`
			Value     string  `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil || p.ConfigID != id || p.Value != value || (p.SessionID == nil) != (session == nil) {
			t.Fatalf("%s read as %v, %q, %q", params, session, id, value)
		}
	})
}
