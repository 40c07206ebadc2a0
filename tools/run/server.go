// Package run serves the agent's run tool, an MCP server of its own over
// Streamable HTTP (tools/mcpserve): run__command runs a program, or a
// shell line, in the agent's workspace (its files/ folder), each call in
// a kernel sandbox of its own (tools/sandbox), killed with every process
// it started at its timeout, its output answered bounded; the background
// commands' calls (run__start, run__list, run__read, run__stop) are the
// same server's, over tools/run/background (Options.Background), each
// command in the same sandbox. Its settings are config.json's "run"
// table, read at each call (Settings).
package run

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/home"
	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/run/background"
)

// Tool is run as tools/mcpserve names it.
var Tool = mcpserve.Tool{Name: "run", Title: "Link Run", Env: "LNK_RUN"}

// Instructions is what run's initialize answer says of its calls.
const Instructions = `Run programs on your owner's machine, in your workspace (your files/ folder, also your HOME), each call in a sandbox of its own: the workspace is yours to read and write; the system (/usr, /etc...) is read-only; /tmp is the call's own and empty; the rest of your home, other agents and the owner's files are not there; the network is off unless your owner turned it on.

- run__command runs one command and answers when it ends: its exit status, then its stdout and stderr. Give command (a program and its arguments, no shell) or shell (one line for /bin/sh -c, with pipes and &&). Long output is cut in the middle, saying how much; narrow it (grep, head, tail) rather than reading it all. A command past its timeout is killed with everything it started; say a longer timeout for builds and tests (up to the ceiling), or start it in the background.
- Nothing outlives a run__command call: for a server, a long build or anything you check on later, use run__start (when offered), which answers its id at once; its end comes back to you later as a message from run:<id>, with its exit status and the last of its output. run__read reads its output meanwhile (from an offset; each answer says where to read on), run__list lists your background commands, run__stop ends one.
- A refusal by the system (Permission denied, Network is unreachable) is the sandbox: don't try to get around it; tell your owner what you needed.`

// Options are a run server's.
type Options struct {
	Paths  store.Paths   // the agent's: its files/ is the workspace, its config.json the settings
	Logger *slog.Logger  // what goes wrong outside a call's answer; nil logs nothing
	Idle   time.Duration // a session unused this long is ended; 0 is an hour
	// Background keeps the background commands (run__start, run__list,
	// run__read, run__stop, offered with it); nil offers none.
	Background *background.Manager
}

// maxConfig bounds config.json as run reads it.
const maxConfig = 1 << 20

// New is the MCP server of run for the agent opts names, with
// run__command, and the background commands' calls with
// opts.Background; Handler serves it.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "link-run", Title: "Link Run", Version: "1"}, &mcp.ServerOptions{Instructions: Instructions})
	c := calls{opts: opts}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "command",
		Description: "Run a program with its arguments (command) or a shell line (shell) in your workspace, sandboxed, and answer its exit status, stdout and stderr (long output cut in the middle, said). Killed with everything it started past its timeout (seconds; the agent's default unless said).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, c.command)
	if opts.Background != nil {
		addBackground(s, c)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Handler serves s over Streamable HTTP, a session for each client that
// initializes, ended once unused for opts.Idle.
func Handler(s *mcp.Server, opts Options) http.Handler {
	if opts.Idle <= 0 {
		opts.Idle = time.Hour
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Logger:         opts.Logger,
		SessionTimeout: opts.Idle,
	})
}

type calls struct{ opts Options }

// ReadSettings reads run's settings from the agent's config.json, never
// through a link, bounded (Defaults when there is none).
func ReadSettings(ctx context.Context, p store.Paths) (Settings, error) {
	b, err := home.Files{Home: linkHome(p.Root)}.ReadFile(ctx, p.Agent, "config.json", maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		return Defaults(), err
	}
	return ParseSettings(b)
}

// prepare checks in and reads what running it takes: the workspace (made
// when missing) and the agent's settings now.
func (c calls) prepare(ctx context.Context, in CommandIn) (ws string, s Settings, err error) {
	if err := in.Check(); err != nil {
		return "", s, err
	}
	if s, err = ReadSettings(ctx, c.opts.Paths); err != nil {
		return "", s, err
	}
	ws = c.opts.Paths.Files()
	return ws, s, ensureWorkspace(ws)
}

func (c calls) command(ctx context.Context, _ *mcp.CallToolRequest, in CommandIn) (*mcp.CallToolResult, any, error) {
	ws, s, err := c.prepare(ctx, in)
	if err != nil {
		return refused(err), nil, nil
	}
	r, err := Run(ctx, ws, s, in)
	if err != nil {
		return refused(err), nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text()}}, IsError: r.Exit != 0 || r.TimedOut > 0}, nil, nil
}

// refused is a call's answer that it was not run, and why.
func refused(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Refused: " + err.Error()}}}
}
