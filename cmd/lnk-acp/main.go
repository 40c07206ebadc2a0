// Package main is the lnk-acp command, Harness Hub's generic adapter: it
// serves any agent that speaks ACP over stdio (Claude Code, Codex, Gemini
// CLI, Link Harness itself) at one agent's endpoint, as Link's bridges
// reach it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/lnk-dev/link/cmd/internal/environ"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness/mcptools"
	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/hub/actions"
	"github.com/lnk-dev/link/model"
)

func main() {
	hub.KeeperMain() // a copy of lnk-acp keeps each harness
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Once the first has come, a second SIGTERM or SIGINT ends the
	// process at once, as if none were caught.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run is the program with its arguments; it returns the exit code.
func run(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "endpoint" {
		return runEndpoint(args[1:], environ.Map(), os.Stdout, os.Stderr)
	}
	if len(args) > 0 && args[0] == "configure" {
		env := environ.Map()
		return configure(env).Run(args[1:], env, os.Stdout, os.Stderr)
	}
	m := NewMain(os.Stdout, os.Stderr, environ.Map())
	if err := m.ParseFlags(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "lnk-acp: %v\n", err)
		return 2
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-acp: %v\n", err)
		return 1
	}
	return 0
}

// presets are the harnesses lnk-acp knows by name: the command each runs
// when none follows --.
var presets = map[string][]string{
	"claude": {"claude-agent-acp"},
	"codex":  {"codex-acp"},
	"gemini": {"gemini", "--acp"},
}

// presetEnv is what a preset sets in its harness's environment, unless
// lnk-acp's own environment already says it.
var presetEnv = map[string]map[string]string{
	// Gemini CLI connects no MCP server, not even those session/new
	// gives it, in a folder it doesn't trust, and it trusts none until
	// someone says so (its trustedFolders.json, or this variable).
	// lnk-acp runs it unattended in --dir, every permission it asks
	// allowed, so that folder is trusted for it: else Link's tools
	// would never reach it (docs/decisions/034-hub-real-agents.md).
	"gemini": {"GEMINI_CLI_TRUST_WORKSPACE": "true"},
}

// Main is the program: ParseFlags, then Run until its context ends (or
// Close), so tests run the real program on port 0.
type Main struct {
	Stdout, Stderr io.Writer
	Env            map[string]string

	// What the flags (or the environment) said.
	Home, Agent, KeyFile, Dir, Preset string
	Port                              int
	Command                           []string
	// Actions are the files of Link's namespaces' actions beside the
	// chat namespace's (--actions, repeated).
	Actions []string
	// Store reads and writes the harness's own session files for agent
	// state (hub.Config.Store); nil is the preset's (presetStore), and
	// with none the hub answers it through the harness: its own agent
	// state, else session/load's replay for an export.
	Store hub.Store
	// TurnTimeout bounds a prompt's turn (--turn-timeout,
	// hub.Config.TurnTimeout; 0 is the hub's 30 minutes).
	TurnTimeout time.Duration
	// IdleClose is how long a session goes unused before it is closed
	// (--idle-close, hub.Config.IdleClose; 0 is the hub's 10 minutes).
	IdleClose time.Duration
	// CallTimeout bounds each call of the harness but a prompt's turn,
	// its initialize among them (hub.Config.CallTimeout; 0 is the hub's
	// 30 s).
	CallTimeout time.Duration

	ready chan struct{} // closed once listening
	url   string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewMain makes the program with its output and environment.
func NewMain(stdout, stderr io.Writer, env map[string]string) *Main {
	return &Main{Stdout: stdout, Stderr: stderr, Env: env, ready: make(chan struct{}), done: make(chan struct{})}
}

const usage = `usage: lnk-acp [--preset claude|codex|gemini] [flags] [-- COMMAND ARGS...]
       lnk-acp endpoint [--port N]
       lnk-acp configure [--home DIR] [--agent NAME] [--spec FILE]

Serves an agent that speaks ACP over stdio at one agent's endpoint (ACP
over a WebSocket per message), and prints the endpoint's address once it
listens. The agent is COMMAND, or the preset's (claude-agent-acp,
codex-acp, gemini --acp). Each flag may also come from the environment
variable named beside it. lnk-acp endpoint prints the address where it
serves, as a JSON string, for Link to find it. lnk-acp configure writes the
agent's config.json from its spec (spec.toml) and keeps Link's tools its
environment names for the agent's later starts.

`

// ParseFlags reads args: the flags, each else from the environment, then
// the command after --.
func (m *Main) ParseFlags(args []string) error {
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("lnk-acp", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&m.Preset, "preset", "", "the harness: claude, codex or gemini (its command, when none follows --)")
	fs.StringVar(&m.Home, "home", m.Env["LNK_HOME"], "the Link home folder, where each thread's session is kept ($LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&m.Agent, "agent", m.Env[contract.EnvAgent], "the agent it answers ($LNK_AGENT, else main)")
	port := fs.String("port", m.Env[contract.EnvPort], "the endpoint's port on 127.0.0.1 ($LNK_PORT, else 18800; 0 picks a free one)")
	fs.StringVar(&m.KeyFile, "key-file", m.Env["LNK_KEY_FILE"], "the file holding the endpoint key ($LNK_KEY_FILE)")
	fs.StringVar(&m.Dir, "dir", "", "the folder the harness runs in and its sessions' cwd (else the current one)")
	fs.DurationVar(&m.CallTimeout, "call-timeout", 0, "how long each call of the harness but a prompt's may take, its start among them (0: 30s)")
	fs.DurationVar(&m.TurnTimeout, "turn-timeout", 0, "how long a prompt's turn may run before the harness is asked to cancel it, and stopped 30 s later (0: 30m)")
	fs.DurationVar(&m.IdleClose, "idle-close", 0, "how long a thread's session may go unused before it is closed, where the harness can take it up again (0: 10m)")
	fs.Func("actions", "an actions.toml of one of Link's namespaces, beside the chat namespace's (repeat it for more)", func(p string) error {
		m.Actions = append(m.Actions, p)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("the harness's command follows --: %q", fs.Args())
	}
	m.Command = command
	if len(m.Command) == 0 {
		if m.Preset == "" {
			fmt.Fprint(m.Stderr, usage)
			return errors.New("no harness: say --preset or a command after --")
		}
		p, ok := presets[m.Preset]
		if !ok {
			return fmt.Errorf("--preset is claude, codex or gemini, not %q", m.Preset)
		}
		m.Command = p
	} else if m.Preset != "" {
		if _, ok := presets[m.Preset]; !ok {
			return fmt.Errorf("--preset is claude, codex or gemini, not %q", m.Preset)
		}
	}
	if m.Agent == "" {
		m.Agent = contract.DefaultAgent
	}
	if err := contract.CheckAgentName(m.Agent); err != nil {
		return err
	}
	if *port == "0" {
		m.Port = 0
	} else {
		p, err := contract.Port(*port)
		if err != nil {
			return err
		}
		m.Port = p
	}
	if m.KeyFile == "" {
		return errors.New("no key file: say --key-file or $LNK_KEY_FILE")
	}
	if m.Home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("find the Link home: %w (say --home)", err)
		}
		m.Home = filepath.Join(dir, "lnk")
	}
	return nil
}

// sessionsFile is where the agent's threads' sessions are kept.
func (m *Main) sessionsFile() string {
	return filepath.Join(m.Home, "agents", m.Agent, "hub", "sessions.json")
}

// answersFile is where the answers nobody took are kept for
// _link/recover.
func (m *Main) answersFile() string {
	return filepath.Join(m.Home, "agents", m.Agent, "hub", "answers.json")
}

// Run serves until ctx ends or Close: it listens, prints the endpoint's
// address, and answers messages through the hub; stopping, it ends the
// harness's whole process group (SIGTERM, SIGKILL 5 s later), so it
// returns within about 5 s whatever the harness does.
func (m *Main) Run(ctx context.Context) error {
	defer close(m.done)
	ctx, cancel := context.WithCancel(ctx)
	m.mu.Lock()
	m.cancel = cancel
	m.mu.Unlock()
	defer cancel()

	key, err := contract.ReadKeyFile(m.KeyFile)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg, tl, err := m.hubConfig(logger)
	if err != nil {
		return err
	}
	defer tl.Close()
	hb, err := hub.New(cfg)
	if err != nil {
		return err
	}
	defer hb.Close()
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: m.Agent, Key: key}},
		Own:     m.Agent,
		Handler: hb,
		Logger:  logger,
	})
	if err != nil {
		return err
	}
	ln, err := endpoint.Listen(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(m.Port)))
	if err != nil {
		return err
	}
	m.url = "http://" + ln.Addr().String() + contract.ACPPath
	fmt.Fprintf(m.Stdout, "endpoint %s\n", m.url)
	close(m.ready)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	select {
	case <-ctx.Done():
	case err := <-served:
		if err != nil {
			return err
		}
	}
	// The harness first: its turns fail at once, so the bridges'
	// connections, which wait for them, end; within its grace.
	hb.Close()
	return srv.Close()
}

// hubConfig is the hub's config for the harness Main runs: the chat's
// actions and those of m.Actions, Link's tools (those lnk-acp configure
// kept, under the environment's) given to each session and called by a
// Link-owned action's route, the preset's store of agent state and its
// environment. tl is the tools' client the routes call, the caller's to
// close.
func (m *Main) hubConfig(logger *slog.Logger) (_ hub.Config, tl *mcptools.Tools, _ error) {
	acts := actions.Chat()
	for _, p := range m.Actions {
		a, err := actions.Load(p)
		if err != nil {
			return hub.Config{}, nil, err
		}
		acts = append(acts, a...)
	}
	// A Link-owned action's route is a call of one of Link's tools, as
	// Link Harness names it (task__list), given the text after the
	// command.
	folder, err := agentFolder(m.Home, m.Agent)
	if err != nil {
		return hub.Config{}, nil, err
	}
	// Link's tools: those lnk-acp configure kept, under those the
	// environment names.
	menv, err := withKeptTools(m.Env, folder)
	if err != nil {
		return hub.Config{}, nil, err
	}
	tl, err = mcptools.ForHome(m.Home, menv, logger)
	if err != nil {
		return hub.Config{}, nil, err
	}
	route := func(ctx context.Context, route, thread, args string) (string, error) {
		input, _ := json.Marshal(map[string]string{"text": args})
		text, failed := tl.Call(ctx, m.Agent, model.ToolCall{ID: "action", Name: route, Input: string(input)}, contract.CallMeta{Thread: thread})
		if failed {
			return "", errors.New(text)
		}
		return text, nil
	}
	var linkTools []hub.Tool
	for _, s := range mcptools.Servers(menv) {
		linkTools = append(linkTools, hub.Tool{Name: s.Name, URL: s.Addr})
	}
	store := m.Store
	if store == nil {
		if store, err = presetStore(m.Preset, menv, m.Dir); err != nil {
			tl.Close()
			return hub.Config{}, nil, err
		}
	}
	return hub.Config{
		Command:  m.Command,
		Env:      m.harnessEnv(menv),
		Dir:      m.Dir,
		Sessions: m.sessionsFile(),
		Answers:  m.answersFile(),
		Store:    store,
		Tools:    linkTools,
		// A harness that takes no MCP server over HTTP has them written
		// into its settings, where its preset knows them.
		ToolSettings: presetSettings(m.Preset, menv),
		Actions:      acts,
		Route:        route,
		Logger:       logger,
		CallTimeout:  m.CallTimeout,
		TurnTimeout:  m.TurnTimeout,
		IdleClose:    m.IdleClose,
		// A harness may write its own files a little after it answers
		// (Claude Code drains its transcript's queue every 100 ms): agent
		// state waits a second after the last turn for them.
		StateQuiet: time.Second,
	}, tl, nil
}

// harnessEnv is the harness's environment: menv, and the preset's
// (presetEnv) where menv doesn't set it.
func (m *Main) harnessEnv(menv map[string]string) []string {
	env := make([]string, 0, len(menv))
	for k, v := range menv {
		env = append(env, k+"="+v)
	}
	for k, v := range presetEnv[m.Preset] {
		if _, ok := menv[k]; !ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Ready is closed once the endpoint listens.
func (m *Main) Ready() <-chan struct{} { return m.ready }

// URL is the endpoint's address, once Ready.
func (m *Main) URL() string { return m.url }

// Close stops a running Run as a signal does and waits for it.
func (m *Main) Close() error {
	m.mu.Lock()
	cancel := m.cancel
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-m.done
	return nil
}
