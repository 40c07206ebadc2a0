package run

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/sandbox"
)

// StartIn is run__start's arguments.
type StartIn struct {
	Command []string `json:"command,omitempty" jsonschema:"the program and its arguments, each as it is (no shell): [\"npm\", \"run\", \"dev\"]"`
	Shell   string   `json:"shell,omitempty" jsonschema:"a shell line run by /bin/sh -c, for pipes, redirections and &&: \"make test 2>&1\""`
}

// addBackground adds run__start, run__list, run__read and run__stop to s.
func addBackground(s *mcp.Server, c calls) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "start",
		Description: "Start a command in the background (a program and its arguments, or a shell line), sandboxed in your workspace as run__command is, and answer its id at once. It runs on past this turn (a server, a long build or test), and when it ends its exit status and the last of its output come back to you as a message from run:<id> in this conversation.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, c.start)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list",
		Description: "List your background commands, the latest first: each one's id, whether it runs (for how long) or how it ended, its bytes of output, and its command.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, c.list)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "read",
		Description: "Read a background command's output (its stdout and stderr as one stream) from a byte offset (0 the first), at most limit bytes (16384 unless said, 65536 at most); the answer says the offset to read on from. Only the latest output is kept (8 MiB unless the agent's settings say).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, c.read)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "stop",
		Description: "Stop a background command and every process it started (SIGTERM, then SIGKILL a second later), and answer how it ended; its end then comes as no message.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true},
	}, c.stop)
}

func (c calls) start(ctx context.Context, req *mcp.CallToolRequest, in StartIn) (*mcp.CallToolResult, any, error) {
	thread, hops, err := mcpserve.Origin(req.Params.Meta)
	if err != nil {
		return refused(err), nil, nil
	}
	cin := CommandIn{Command: in.Command, Shell: in.Shell}
	ws, s, err := c.prepare(ctx, cin)
	if err != nil {
		return refused(err), nil, nil
	}
	spec := specOf(ws, s, cin)
	// Refused here, where the model hears why, rather than by the
	// supervisor: the same check sandbox.Command makes.
	if !spec.Unconfined {
		if err := sandbox.Available(); err != nil {
			return refused(err), nil, nil
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return refused(err), nil, nil
	}
	info, err := c.opts.Background.Start(ctx, background.Request{
		Thread: thread, Hops: hops, Command: words(cin), Spec: b,
		MaxRunning: s.Background.MaxRunning, KeepOutput: s.Background.Output,
	})
	if err != nil {
		return refused(err), nil, nil
	}
	return answer(background.StartedText(info)), nil, nil
}

func (c calls) list(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	thread, _, _ := mcpserve.Origin(req.Params.Meta)
	all, err := c.opts.Background.List()
	if err != nil {
		return refused(err), nil, nil
	}
	return answer(background.ListText(all, thread, time.Now())), nil, nil
}

func (c calls) read(_ context.Context, _ *mcp.CallToolRequest, in background.ReadIn) (*mcp.CallToolResult, any, error) {
	if err := in.Check(); err != nil {
		return refused(err), nil, nil
	}
	out, info, err := c.opts.Background.Read(in.ID, in.Offset, in.Limit)
	if err != nil {
		return refused(err), nil, nil
	}
	return answer(background.ReadText(out, info, time.Now())), nil, nil
}

func (c calls) stop(ctx context.Context, _ *mcp.CallToolRequest, in background.IDIn) (*mcp.CallToolResult, any, error) {
	info, err := c.opts.Background.Stop(ctx, in.ID)
	if err != nil {
		return refused(err), nil, nil
	}
	return answer(background.StoppedText(info, time.Now())), nil, nil
}

// answer is a call's text answer.
func answer(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// words is in's command as said back to the model: the shell line, or
// the program and its arguments, each quoted that needs it.
func words(in CommandIn) string {
	if in.Shell != "" {
		return in.Shell
	}
	q := make([]string, len(in.Command))
	for i, a := range in.Command {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?;&|<>()") {
			q[i] = strconv.Quote(a)
		}
	}
	return strings.Join(q, " ")
}
