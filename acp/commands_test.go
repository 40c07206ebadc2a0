package acp

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// commanding is the scripted agent with commands of its own: one taking
// input, one not.
type commanding struct{ *scripted }

var _ Commander = commanding{}

func (commanding) Commands(agent string) []Command {
	return []Command{
		{Name: "model:set", Description: "Run this conversation on a model", Input: &CommandInput{Hint: "model name or alias"}},
		{Name: "chat:status", Description: "Say how this conversation stands"},
	}
}

// TestCommandTranscripts plays testdata/commands/*.jsonrpc against Serve
// driving an agent that takes commands: the update, its place right
// after each session's answer, its shape as ACP's schema has it.
func TestCommandTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/commands/*.jsonrpc")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			playTranscript(t, file, commanding{newScripted()})
		})
	}
}

// sdkCommands is coder/acp-go-sdk's Client recording the commands of
// each available_commands_update, by session.
type sdkCommands struct {
	sdk.Client
	got chan string
}

func (c *sdkCommands) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	u := n.Update.AvailableCommandsUpdate
	if u == nil {
		c.got <- string(n.SessionId) + ": another update"
		return nil
	}
	var names []string
	for _, cmd := range u.AvailableCommands {
		name := cmd.Name
		if cmd.Input != nil && cmd.Input.Unstructured != nil {
			name += "(" + cmd.Input.Unstructured.Hint + ")"
		}
		names = append(names, name)
	}
	c.got <- string(n.SessionId) + ": " + strings.Join(names, " ")
	return nil
}

func (c *sdkCommands) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, nil
}

// TestGoSDKCommands: coder/acp-go-sdk, generated from ACP's schema, reads
// the update of each session Serve opens as an available_commands_update;
// an agent that takes no commands sends none.
func TestGoSDKCommands(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Agent
		want string
	}{
		{"commander", commanding{newScripted()}, "default: model:set(model name or alias) chat:status|slack:D0123ABCDEF: model:set(model name or alias) chat:status|telegram:42: model:set(model name or alias) chat:status"},
		{"none", newScripted(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, NewStdio(sr, sw, 0), "main", nil, c.a) }()
			cl := &sdkCommands{got: make(chan string, 8)}
			conn := sdk.NewClientSideConnection(cl, cw, cr)
			if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/", McpServers: []sdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "slack:D0123ABCDEF", Cwd: "/", McpServers: []sdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: "telegram:42", Cwd: "/"}); err != nil {
				t.Fatal(err)
			}
			// Its answer comes after the last session's update.
			if _, err := conn.CallExtension(ctx, "_link/recover", map[string]any{}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for len(got) < 3 && c.want != "" {
				select {
				case s := <-cl.got:
					got = append(got, s)
				case <-time.After(5 * time.Second):
					t.Fatalf("only %q came", got)
				}
			}
			select {
			case s := <-cl.got:
				t.Fatalf("one update too many: %s", s)
			default:
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("the SDK read\n%s\nwant\n%s", g, c.want)
			}
			cw.Close()
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
}

// TestTypeScriptCommands: the official TypeScript client, which checks
// each session/update against ACP's schema, reads the commands of each
// session Serve opens. It needs node and `npm ci --prefix acp/testdata/ts`.
func TestTypeScriptCommands(t *testing.T) {
	stderr := runTSClient(t, "commands.mjs", commanding{newScripted()})
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var report struct {
		Created struct{ SessionID string }
		Seen    []struct {
			SessionID string
			Update    struct {
				SessionUpdate     string
				AvailableCommands []Command
			}
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	var got []string
	for _, s := range report.Seen {
		names := []string{s.SessionID, s.Update.SessionUpdate}
		for _, c := range s.Update.AvailableCommands {
			names = append(names, c.Name)
			if c.Input != nil {
				names = append(names, "<"+c.Input.Hint+">")
			}
		}
		got = append(got, strings.Join(names, " "))
	}
	want := "default available_commands_update model:set <model name or alias> chat:status|" +
		"slack:D0123ABCDEF available_commands_update model:set <model name or alias> chat:status|" +
		"telegram:42 available_commands_update model:set <model name or alias> chat:status"
	if g := strings.Join(got, "|"); g != want || report.Created.SessionID != "default" {
		t.Errorf("the TS client saw\n%s\nwant\n%s\n(session %q)", g, want, report.Created.SessionID)
	}
}
