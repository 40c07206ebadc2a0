package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestRealAgentsTools: Link's tools reach each real agent as mcpServers
// over HTTP, and a call of one, scripted by the fake provider under the
// name the agent offered it to its model by, reaches the MCP server. Codex
// offers an MCP server's tools as one Responses API namespace
// (mcp__probe with lookup in it), which the fake provider lists as
// mcp__probe.lookup. Gemini CLI connects them only in a folder it
// trusts, which its preset says the --dir is. Every permission the agent
// asks meanwhile is answered, on the wire, with the first option that
// allows; Codex is made to ask for a shell command (run outside its
// sandbox, require_escalated) and the command runs. Each, its session
// taken up after lnk-acp restarts, calls the tool again.
func TestRealAgentsTools(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
			probe, calls := probeServer(t)
			fake := fakeprovider.New()
			defer fake.Close()
			home, work, wire := t.TempDir(), t.TempDir(), t.TempDir()
			env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home, "LNK_TOOL_PROBE": probe}
			for k, v := range a.env(fake.URL()) {
				env[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
			defer cancel()
			m, key := runReal(t, env, []string{"--home", home, "--dir", work, "--preset", a.name}, tapped(wire, a.command(bin, fake.URL()))...)
			message(t, ctx, m.URL(), key, "telegram:1", "hello")
			name := ""
			for _, r := range fake.Requests() {
				for _, tool := range r.Tools {
					if strings.Contains(tool, "lookup") {
						name = tool
					}
				}
			}
			if name == "" {
				t.Fatalf("the model was offered no tool of the probe's mcpServer: %q", fake.Requests()[len(fake.Requests())-1].Tools)
			}
			fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: name, Input: `{}`}}})
			message(t, ctx, m.URL(), key, "telegram:1", "look it up")
			if calls.Load() == 0 {
				t.Fatalf("the agent never called %s on the probe", name)
			}
			asked := len(permissions(t, wire))
			if a.name == "codex" {
				fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "exec_command",
					Input: `{"cmd":"touch ran-by-codex","sandbox_permissions":"require_escalated","justification":"the test asks"}`}}})
				message(t, ctx, m.URL(), key, "telegram:1", "touch it")
				if len(permissions(t, wire)) == asked {
					t.Fatalf("Codex asked no permission for a command outside its sandbox")
				}
				if _, err := os.Stat(filepath.Join(work, "ran-by-codex")); err != nil {
					t.Fatalf("the command allowed did not run: %v", err)
				}
			}
			wires := []string{wire}
			// The session taken up after a restart is given the tools
			// too (session/resume's or session/load's mcpServers).
			m.Close()
			wire = t.TempDir() // the new process's request ids start again
			wires = append(wires, wire)
			m, key = runReal(t, env, []string{"--home", home, "--dir", work, "--preset", a.name}, tapped(wire, a.command(bin, fake.URL()))...)
			before := calls.Load()
			fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: name, Input: `{}`}}})
			message(t, ctx, m.URL(), key, "telegram:1", "look it up again")
			if calls.Load() == before {
				t.Fatalf("after lnk-acp restarted, the agent never called %s in the thread's session taken up", name)
			}
			if last := fake.Requests()[len(fake.Requests())-1]; !strings.Contains(string(last.Body), "hello") {
				t.Errorf("after lnk-acp restarted, the model was not sent the thread's first message: its session was not taken up")
			}
			var all []permission
			for _, w := range wires {
				all = append(all, permissions(t, w)...)
			}
			for _, p := range all {
				// The first option that allows; Claude's bypassPermissions
				// passed over (docs/decisions/029-hub.md), which none offers here.
				want := ""
				for _, o := range p.options {
					if (o.Kind == "allow_once" || o.Kind == "allow_always") && o.OptionID != "bypassPermissions" {
						want = o.OptionID
						break
					}
				}
				if want == "" || p.chosen != want {
					t.Errorf("offered %+v, the hub answered %q, want %q, the first that allows", p.options, p.chosen, want)
				}
				t.Logf("offered %+v, answered %q", p.options, p.chosen)
			}
			t.Logf("%s called %s; %d permissions asked, each answered with the first option that allows", a.name, name, len(all))
		})
	}
}

// tapped is command run so that what lnk-acp writes to it and what it
// writes back are kept, a JSON-RPC message a line, in dir/in.jsonl and
// dir/out.jsonl (a pipeline through tee, in the process group the hub
// ends).
func tapped(dir string, command []string) []string {
	return append([]string{"sh", "-c", `tee -a "$0/in.jsonl" | "$@" | tee -a "$0/out.jsonl"`, dir}, command...)
}

// permission is one session/request_permission on the wire: the options
// the agent offered and the one the hub answered with.
type permission struct {
	options []hub.PermissionOption
	chosen  string
}

// permissions are the permission requests the tapped agent in dir sent,
// each with the answer lnk-acp sent back; one not answered fails the
// test.
func permissions(t *testing.T, dir string) []permission {
	t.Helper()
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Options []hub.PermissionOption `json:"options"`
		} `json:"params"`
		Result struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		} `json:"result"`
	}
	read := func(name string) []message {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var out []message
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				out = append(out, m)
			}
		}
		return out
	}
	answers := map[string]string{}
	for _, m := range read("in.jsonl") {
		if m.Method == "" && len(m.ID) > 0 {
			answers[string(m.ID)] = m.Result.Outcome.Outcome + " " + m.Result.Outcome.OptionID
		}
	}
	var out []permission
	for _, m := range read("out.jsonl") {
		if m.Method != "session/request_permission" {
			continue
		}
		a, ok := answers[string(m.ID)]
		if !ok {
			t.Fatalf("permission request %s was not answered", m.ID)
		}
		chosen, _ := strings.CutPrefix(a, "selected ")
		out = append(out, permission{options: m.Params.Options, chosen: chosen})
	}
	return out
}
