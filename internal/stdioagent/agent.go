// Package stdioagent is the hub's tests' stdio ACP agent, built on
// coder/acp-go-sdk: what each prompt does is said by its text. A test
// binary runs itself as the agent (Main) when its environment says so.
package stdioagent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/lnk-dev/link/internal/recovery"
)

// Role is the environment variable that makes a test binary the agent
// (agent) or an npx-style wrapper running the agent as its child
// (wrapper); Main runs it and exits.
const Role = "HUB_TEST_ROLE"

// Main runs the role the environment names, and exits; with none it
// returns.
func Main() {
	switch os.Getenv(Role) {
	case "agent":
		runAgent()
		os.Exit(0)
	case "wrapper":
		os.Exit(runWrapper())
	case "escapee":
		escapee()
	}
}

// Environment of the scripted agent.
const (
	EnvState    = "HUB_AGENT_STATE"    // folder of its sessions and its log
	EnvFail     = "HUB_AGENT_FAIL"     // a file: while it exists, exit at start with its text on stderr
	EnvCaps     = "HUB_AGENT_CAPS"     // resume,load,list,mcp,close,threads: what it says it does
	EnvNoTerm   = "HUB_AGENT_NOTERM"   // ignore SIGTERM
	EnvStay     = "HUB_AGENT_STAY"     // live on once its input ends, as codex-acp's native binary does
	EnvLate     = "HUB_AGENT_LATE"     // answer ids 1..50 at start, as if late
	EnvNoLists  = "HUB_AGENT_NOLISTS"  // send no available_commands_update
	EnvNoResume = "HUB_AGENT_NORESUME" // refuse session/resume
	EnvLateList = "HUB_AGENT_LATELIST" // list a new session's commands only after session/new answered
	// EnvLateReplay has session/load answer first and replay its history
	// after, as Gemini CLI 0.61.0 does (its streamHistory not awaited).
	EnvLateReplay = "HUB_AGENT_LATEREPLAY"
	// EnvSlowTake names a file: while it exists, session/resume and
	// session/load answer only after a second, as a harness taking up a
	// long session on a loaded machine may.
	EnvSlowTake = "HUB_AGENT_SLOWTAKE"
	// EnvQuoteMCP has session/resume refused with an error quoting the
	// URL of each MCP server it was given, on standard error too, as an
	// agent that couldn't reach them might.
	EnvQuoteMCP = "HUB_AGENT_QUOTEMCP"
	// EnvSettings names its own settings file, read once at its start
	// as a harness reads its settings: {"mcpServers": {NAME: {"url":
	// URL}}}, answered by the prompt mcp after the session's own.
	EnvSettings = "HUB_AGENT_SETTINGS"
)

// runWrapper runs the agent as its child, as npx runs a package's
// program, and exits with it.
func runWrapper() int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), Role+"=agent")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

// agent is the scripted agent. What each prompt does is said by its text
// (its last line, so a quoted sender's text works too):
//
//	crash          streams "partial", then exits (a crash mid-turn)
//	orphan         kills its parent (the wrapper) and lives on, ignoring SIGTERM
//	permission     asks a permission; answers which option it was given
//	wait           waits for session/cancel, then asks a permission and
//	               answers with its outcome, stop reason cancelled
//	unknown        streams an update of a kind ACP doesn't have and a chunk
//	               with fields ACP doesn't have, raw
//	big N          streams one chunk of N bytes
//	garbage        writes a line that isn't JSON, a response to no request
//	               and a request the hub doesn't know, then answers
//	history        answers what this session was sent before
//	mcp            answers the mcpServers its session was given
//	slow           answers after a second
//	hang           never answers, session/cancel or not
//	escape         starts a process of its own session that ignores
//	               SIGTERM and lives on; logs "escapee PID"
//	orphan-exit    starts a shell that leaves a child and exits at once,
//	               as an agent's tool runs; the child (logged "left PID")
//	               exits a moment later, its parent long gone
//	flood          streams chunks of a KiB as fast as it can until
//	               session/cancel, then answers cancelled
//	anything else  answers "echo: " and the whole text
type agent struct {
	conn  *sdk.AgentSideConnection
	out   *lockedWriter
	state string
	caps  map[string]bool

	mu        sync.Mutex
	open      map[string]bool // sessions made or taken up, and not closed
	cancelled map[string]chan struct{}
	mcp       map[string][]string
	settings  []string                    // NAME=URL of its settings' mcpServers, read at its start
	answers   map[string]*strings.Builder // the running prompt's answer, by session
	recover   *recovery.Ledger            // with threads among its caps (recover.go)
}

// lockedWriter writes whole lines to stdout, the SDK's and the agent's
// raw ones alike.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func runAgent() {
	if os.Getenv(EnvNoTerm) != "" {
		ignoreTerm()
	}
	a := &agent{out: &lockedWriter{w: os.Stdout}, state: os.Getenv(EnvState), caps: map[string]bool{}, open: map[string]bool{}, cancelled: map[string]chan struct{}{}, mcp: map[string][]string{}, answers: map[string]*strings.Builder{}}
	a.log(fmt.Sprintf("pgid %d", pgrp()))
	if f := os.Getenv(EnvFail); f != "" {
		if msg, err := os.ReadFile(f); err == nil {
			a.log("failed")
			fmt.Fprintln(os.Stderr, strings.TrimSpace(string(msg)))
			os.Exit(1)
		}
	}
	for _, c := range strings.Split(os.Getenv(EnvCaps), ",") {
		a.caps[c] = true
	}
	if f := os.Getenv(EnvSettings); f != "" {
		a.settings = readSettings(f)
	}
	if b, err := os.ReadFile(os.Getenv(EnvLate)); err == nil {
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		for id := 1; id <= n; id++ {
			fmt.Fprintf(a.out, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`+"\n", id)
		}
	}
	a.conn = sdk.NewAgentSideConnection(a, a.out, os.Stdin)
	<-a.conn.Done()
	a.log("input ended")
	for os.Getenv(EnvStay) != "" {
		time.Sleep(time.Hour)
	}
}

// log appends a line to the agent's log, and returns how many lines of
// that kind it holds.
func (a *agent) log(line string) int {
	if a.state == "" {
		return 0
	}
	path := filepath.Join(a.state, "log")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
	b, _ := os.ReadFile(path)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			n++
		}
	}
	return n
}

func (a *agent) raw(line string) { fmt.Fprintln(a.out, line) }

func (a *agent) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.log("initialize")
	caps := sdk.AgentCapabilities{LoadSession: a.caps["load"], McpCapabilities: sdk.McpCapabilities{Http: a.caps["mcp"]}}
	if a.caps["resume"] {
		caps.SessionCapabilities.Resume = &sdk.SessionResumeCapabilities{}
	}
	if a.caps["list"] {
		caps.SessionCapabilities.List = &sdk.SessionListCapabilities{}
	}
	if a.caps["close"] {
		caps.SessionCapabilities.Close = &sdk.SessionCloseCapabilities{}
	}
	caps.PromptCapabilities.Image = true
	res := sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AgentCapabilities: caps, AuthMethods: []sdk.AuthMethod{}}
	if a.caps["threads"] {
		res.Meta = map[string]any{"link": map[string]any{"threads": true}}
	}
	return res, nil
}

func (a *agent) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	a.log("cancel " + string(p.SessionId))
	a.mu.Lock()
	if ch, ok := a.cancelled[string(p.SessionId)]; ok {
		close(ch)
		delete(a.cancelled, string(p.SessionId))
	}
	a.mu.Unlock()
	return nil
}

// slowTake waits a second while EnvSlowTake's file exists.
func (a *agent) slowTake() {
	if _, err := os.Stat(os.Getenv(EnvSlowTake)); err == nil {
		time.Sleep(time.Second)
	}
}

func (a *agent) chunk(ctx context.Context, session sdk.SessionId, text string) {
	a.mu.Lock()
	if b := a.answers[string(session)]; b != nil {
		b.WriteString(text)
	}
	a.mu.Unlock()
	a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: session, Update: sdk.UpdateAgentMessageText(text)})
}

func (a *agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	var text []string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text = append(text, b.Text.Text)
		}
	}
	all := strings.Join(text, "\n")
	lines := strings.Split(all, "\n")
	cmd := strings.TrimPrefix(lines[len(lines)-1], "> ")
	s := p.SessionId
	a.log("prompt " + string(s) + " " + strconv.Quote(truncate(all, 200)))
	defer a.log("end " + string(s) + " " + strconv.Quote(truncate(all, 200)))
	prev, err := a.history(string(s))
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(err.Error())
	}
	a.mu.Lock()
	open := a.open[string(s)]
	a.mu.Unlock()
	if a.caps["close"] && !open {
		return sdk.PromptResponse{}, sdk.NewInvalidParams("session " + string(s) + " is closed: take it up first")
	}
	f, _ := os.OpenFile(filepath.Join(a.state, string(s)), os.O_APPEND|os.O_WRONLY, 0o600)
	fmt.Fprintln(f, strconv.Quote(truncate(all, 200)))
	f.Close()
	// What was said is kept whole beside, as its Store reads it.
	answer := &strings.Builder{}
	a.mu.Lock()
	a.answers[string(s)] = answer
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.answers, string(s))
		a.mu.Unlock()
		appendEntries(filepath.Join(a.state, string(s)+entriesExt), Entry{Role: "user", Text: all}, Entry{Role: "agent", Text: answer.String()})
	}()
	word, arg, _ := strings.Cut(cmd, " ")
	switch word {
	case "crash":
		a.chunk(ctx, s, "partial")
		os.Exit(3)
	case "orphan":
		a.chunk(ctx, s, "partial")
		ignoreTerm()
		killParent()
		select {}
	case "permission":
		res, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: s, Options: []sdk.PermissionOption{
			{OptionId: "bypassPermissions", Name: "Yes, and bypass permissions", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: "acceptEdits", Name: "Yes, and accept edits", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: "plan", Name: "No, keep planning", Kind: sdk.PermissionOptionKindRejectOnce},
		}})
		switch {
		case err != nil:
			a.chunk(ctx, s, "permission failed: "+err.Error())
		case res.Outcome.Selected != nil:
			a.chunk(ctx, s, "given "+string(res.Outcome.Selected.OptionId))
		default:
			a.chunk(ctx, s, "cancelled")
		}
	case "wait":
		ch := make(chan struct{})
		a.mu.Lock()
		a.cancelled[string(s)] = ch
		a.mu.Unlock()
		a.chunk(ctx, s, "waiting")
		<-ch
		ctx := context.Background() // the SDK ended the prompt's own
		res, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: s, Options: []sdk.PermissionOption{{OptionId: "ok", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce}}})
		if err == nil && res.Outcome.Cancelled != nil {
			a.chunk(ctx, s, "permission cancelled")
		} else {
			a.chunk(ctx, s, fmt.Sprintf("permission not cancelled: %v %+v", err, res.Outcome))
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case "unknown":
		a.raw(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"future_kind","x":{"y":[1,2]},"_meta":{"z":true}},"extra":"kept"}}`, s))
		a.raw(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"<b>&</b>","annotations":{"priority":1}},"messageId":"m1","novel":{"a":null}}}}`, s))
	case "big":
		n, _ := strconv.Atoi(arg)
		a.chunk(ctx, s, strings.Repeat("a", n))
	case "garbage":
		a.raw("this is not JSON")
		a.raw(`{"jsonrpc":"2.0","id":987654,"result":{}}`)
		a.raw(`{"jsonrpc":"2.0","id":"x1","method":"weird/thing","params":{}}`)
		a.raw(`{"jsonrpc":"2.0","method":"weird/note","params":{}}`)
		a.chunk(ctx, s, "still here")
	case "history":
		a.chunk(ctx, s, "history: "+strings.ReplaceAll(strings.TrimSpace(prev), "\n", " | "))
	case "mcp":
		a.mu.Lock()
		list := a.mcp[string(s)]
		a.mu.Unlock()
		text := "mcp: " + strings.Join(list, " ")
		if os.Getenv(EnvSettings) != "" {
			text += "; settings: " + strings.Join(a.settings, " ")
		}
		a.chunk(ctx, s, text)
	case "failmcp":
		// Refused with an error quoting the MCP servers it was given, in
		// its message and its data, as an agent that couldn't reach them
		// might.
		a.mu.Lock()
		list := a.mcp[string(s)]
		a.mu.Unlock()
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: "prompt failed: MCP " + strings.Join(list, ", ") + " did not answer", Data: map[string]any{"servers": list}}
	case "escape":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), Role+"=escapee")
		if err := cmd.Start(); err != nil {
			return sdk.PromptResponse{}, err
		}
		a.log(fmt.Sprintf("escapee %d", cmd.Process.Pid))
		go cmd.Wait()
		a.chunk(ctx, s, "escaped")
	case "orphan-exit":
		out, err := exec.Command("sh", "-c", "sleep 0.2 & echo $!").Output()
		if err != nil {
			return sdk.PromptResponse{}, err
		}
		a.log("left " + strings.TrimSpace(string(out)))
		a.chunk(ctx, s, "left one")
	case "hang":
		a.chunk(ctx, s, "hanging")
		select {}
	case "flood":
		ch := make(chan struct{})
		a.mu.Lock()
		a.cancelled[string(s)] = ch
		a.mu.Unlock()
		ctx := context.Background() // the SDK ends the prompt's own at a cancel
		kib := strings.Repeat("f", 1<<10)
		for {
			select {
			case <-ch:
				return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
			default:
			}
			a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: s, Update: sdk.UpdateAgentMessageText(kib)})
		}
	case "slow":
		time.Sleep(time.Second)
		a.chunk(ctx, s, "slow done")
	case "slowbig":
		// As slow, then a chunk of N bytes and a short one after it.
		n, _ := strconv.Atoi(arg)
		time.Sleep(time.Second)
		a.chunk(ctx, s, strings.Repeat("a", n))
		a.chunk(ctx, s, "tail")
	default:
		echo := "echo: " + all
		if link, ok := p.Meta["link"]; ok {
			b, _ := json.Marshal(link)
			echo += " meta:" + string(b)
		}
		a.chunk(ctx, s, echo)
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

var _ sdk.Agent = (*agent)(nil)
var _ sdk.AgentLoader = (*agent)(nil)

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// readSettings is NAME=URL of each of the settings file's mcpServers,
// sorted; none when it isn't there or isn't JSON.
func readSettings(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var set struct {
		MCPServers map[string]struct {
			URL string `json:"url"`
		} `json:"mcpServers"`
	}
	json.Unmarshal(b, &set)
	var out []string
	for name, srv := range set.MCPServers {
		out = append(out, name+"="+srv.URL)
	}
	slices.Sort(out)
	return out
}
