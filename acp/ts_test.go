package acp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/lnk-dev/link/acp/acptest"
)

// TestTypeScriptClient runs the official TypeScript ACP client
// (@agentclientprotocol/sdk, pinned in testdata/ts/package.json) against
// Serve over stdio: an independent implementation of the client side
// agrees with ours on initialize, session/resume, the streamed answer,
// _link/taken, a steered answer's _meta, a refused _meta.link and
// _link/recover. It needs node and `npm ci --prefix acp/testdata/ts`.
func TestTypeScriptClient(t *testing.T) {
	stderr := runTSClient(t, "client.mjs", newScripted())
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var report struct {
		Init struct {
			ProtocolVersion   int
			AgentCapabilities struct {
				LoadSession         bool
				PromptCapabilities  map[string]bool
				SessionCapabilities map[string]any
			}
		}
		Answer  map[string]any
		Steered struct {
			StopReason string
			Meta       map[string]map[string]bool `json:"_meta"`
		}
		Refused *struct {
			Code    int
			Message string
		}
		Recovered struct{ Answers []map[string]string }
		Seen      []struct {
			Method string
			Params map[string]any
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	caps := report.Init.AgentCapabilities
	if report.Init.ProtocolVersion != 1 || !caps.LoadSession || caps.SessionCapabilities["resume"] == nil || !caps.PromptCapabilities["image"] {
		t.Errorf("initialize as the TS client read it: %+v", report.Init)
	}
	if report.Answer["stopReason"] != "end_turn" {
		t.Errorf("answer %v", report.Answer)
	}
	if !report.Steered.Meta["link"]["steered"] {
		t.Errorf("steered answer %+v, want _meta.link.steered", report.Steered)
	}
	if report.Refused == nil || report.Refused.Code != CodeInvalidParams || !strings.Contains(report.Refused.Message, "not one of Link's") {
		// The SDK may put the message in data; the code is what matters.
		t.Errorf("a bad _meta.link as the TS client saw it: %+v", report.Refused)
	}
	if len(report.Recovered.Answers) != 1 || report.Recovered.Answers[0]["id"] != "a1" {
		t.Errorf("recovered %+v", report.Recovered)
	}
	var methods []string
	for _, s := range report.Seen {
		m := s.Method
		if u, ok := s.Params["update"].(map[string]any); ok {
			m += ":" + u["sessionUpdate"].(string)
		}
		methods = append(methods, m)
	}
	want := "_link/taken session/update:agent_message_chunk session/update:tool_call session/update:tool_call_update " +
		"session/update:tool_call session/update:tool_call_update session/update:agent_message_chunk _link/taken"
	if got := strings.Join(methods, " "); got != want {
		t.Errorf("the TS client saw\n%s\nwant\n%s", got, want)
	}
}

// runTSClient runs script, a client of the official TypeScript ACP SDK
// in testdata/ts, against Serve with agent a over stdio, fails t if
// either side fails, and gives what the script reported on its stderr.
// It needs node and `npm ci --prefix acp/testdata/ts`.
func runTSClient(t *testing.T, script string, a Agent) string {
	t.Helper()
	return acptest.RunScript(t, script, nil, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return Serve(ctx, NewStdio(r, w, 0), "main", nil, a)
	})
}
