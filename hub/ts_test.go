package hub

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/acp/acptest"
)

// tsAgentScript is the agent on the official TypeScript ACP SDK the
// hub's tests run behind it (what it does is said at its top); it needs
// node and `npm ci --prefix acp/testdata/ts`.
const tsAgentScript = "../acp/testdata/ts/hub_agent.mjs"

// newTSRig is a hub serving the TypeScript SDK's agent offering caps
// (resume, load, close, list, model, ids), env added to its environment.
func newTSRig(t *testing.T, caps string, env []string, edit func(*Config)) *rig {
	t.Helper()
	node, _ := acptest.TypeScriptSDK(t)
	script, err := filepath.Abs(tsAgentScript)
	if err != nil {
		t.Fatal(err)
	}
	return newRig(t, append([]string{"HUB_TS_CAPS=" + caps}, env...), func(c *Config) {
		c.Command = []string{node, script}
		c.Env = append(c.Env, "HUB_TS_STATE="+c.Dir, "HUB_TS_LOG="+filepath.Join(c.Dir, "ts.log"))
		if edit != nil {
			edit(c)
		}
	})
}

// tsEvent is one line of the TypeScript agent's log: what it was asked
// or told (ev), with its params.
type tsEvent struct {
	Ev     string          `json:"ev"`
	Params json.RawMessage `json:"params"`
	What   string          `json:"what"`    // aborted: the request's method
	Code   *int            `json:"code"`    // aborted: -32800 for $/cancel_request
	Out    string          `json:"outcome"` // permission answered
}

// tsLog is the TypeScript agent's log so far, its events named ev (all
// when ev is "").
func (r *rig) tsLog(ev string) []tsEvent {
	f, err := os.Open(filepath.Join(r.state, "ts.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []tsEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e tsEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && (ev == "" || e.Ev == ev) {
			out = append(out, e)
		}
	}
	return out
}

// sessionOf is the sessionId of e's params.
func (e tsEvent) sessionOf() string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(e.Params, &p)
	return p.SessionID
}
