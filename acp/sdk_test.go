package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	sdk "github.com/coder/acp-go-sdk"
)

// sdkClient is coder/acp-go-sdk's Client for the test: it records the
// session updates and extension notifications it gets. The methods it
// doesn't override are never called by Serve.
type sdkClient struct {
	sdk.Client
	mu   sync.Mutex
	seen []string
}

func (c *sdkClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		c.seen = append(c.seen, "chunk:"+u.AgentMessageChunk.Content.Text.Text)
	case u.ToolCall != nil:
		c.seen = append(c.seen, "tool_call:"+u.ToolCall.Title+":"+string(u.ToolCall.Status))
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		c.seen = append(c.seen, "tool_call_update:"+string(*u.ToolCallUpdate.Status))
	default:
		c.seen = append(c.seen, "other")
	}
	return nil
}

func (c *sdkClient) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, method)
	return nil, nil
}

// TestGoSDKClient: coder/acp-go-sdk's client side, a second independent
// peer, agrees with Serve over stdio framing.
func TestGoSDKClient(t *testing.T) {
	ctx := testCtx(t)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, NewStdio(sr, sw, 0), "main", nil, newScripted()) }()
	cl := &sdkClient{}
	conn := sdk.NewClientSideConnection(cl, cw, cr)
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	caps := init.AgentCapabilities
	type capabilities struct {
		LoadSession, Resume, Image, Audio, EmbeddedContext bool
	}
	gotCaps := capabilities{caps.LoadSession, caps.SessionCapabilities.Resume != nil, caps.PromptCapabilities.Image, caps.PromptCapabilities.Audio, caps.PromptCapabilities.EmbeddedContext}
	if diff := cmp.Diff(capabilities{true, true, true, true, true}, gotCaps); diff != "" {
		t.Errorf("capabilities as the SDK read them (-want +got):\n%s", diff)
	}
	if _, err := conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: "telegram:42", Cwd: "/"}); err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: "telegram:42", Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q", res.StopReason)
	}
	_, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: "telegram:42", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}, Meta: map[string]any{"link": map[string]any{"hops": -1}}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != CodeInvalidParams {
		t.Errorf("a bad _meta.link as the SDK saw it: %v", err)
	}
	raw, err := conn.CallExtension(ctx, "_link/recover", map[string]any{})
	if err != nil || !strings.Contains(string(raw), `"answers"`) {
		t.Errorf("_link/recover: %s %v", raw, err)
	}
	cl.mu.Lock()
	got := strings.Join(cl.seen, " ")
	cl.mu.Unlock()
	want := "_link/taken chunk:Hel tool_call:memory__search:in_progress tool_call_update:completed tool_call:web__fetch:in_progress tool_call_update:failed chunk:lo"
	if got != want {
		t.Errorf("the SDK saw\n%s\nwant\n%s", got, want)
	}
	cw.Close()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
}
