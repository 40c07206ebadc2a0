// Package main is the lnk-link-harness command, Link Harness's server:
// lnk-link-harness serve answers one agent's messages at its endpoint, keeping nothing
// that matters in memory, so it can be killed at any moment and started
// again (or another started on the same store) and the next turn goes on.
package main

import (
	"context"
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

	"github.com/lnk-dev/link/cmd/internal/agentlog"
	"github.com/lnk-dev/link/cmd/internal/environ"
	"github.com/lnk-dev/link/cmd/internal/porthold"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

func main() {
	setGC(environ.Map())
	if len(os.Args) > 1 && os.Args[1] == "endpoint" {
		os.Exit(runEndpoint(os.Args[2:], environ.Map(), os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "configure" {
		os.Exit(configure.Run(os.Args[2:], environ.Map(), os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain(os.Stdout, os.Stderr, environ.Map())
	m.StartAgain = startAgain(os.Stdout, os.Stderr)
	code := 0
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "lnk-link-harness: %v\n", err)
			code = 2
		}
	} else if err := m.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-link-harness: %v\n", err)
		code = 1
	}
	stop()
	os.Exit(code)
}

// Main is the program: ParseFlags, then Run until its context ends (or
// Close), so tests run the real program on port 0.
type Main struct {
	Stdin          io.Reader // read by serve --stdio: os.Stdin unless a test says another
	Stdout, Stderr io.Writer
	Env            map[string]string

	// What the flags (or the environment) said.
	Home, Agent, AgentID, KeyFile, Model string
	Port                                 int
	// AgentsFile, when not "", names the agents this process answers
	// (serve --agents), in place of Agent, AgentID, KeyFile and Port.
	AgentsFile string
	// Stdio speaks ACP on Stdin and Stdout for the one agent, in place of
	// the endpoint (serve --stdio).
	Stdio bool
	// StoreChild starts each store driver's plugin (lnk-sqlite, lnk-gcs)
	// as this process's child, passed only its driver's variables, in
	// place of reaching the agent's store bridge beside it (serve
	// --store-child: a convenience; serve.Config.StoreChild).
	StoreChild bool
	// SleepAfter, when positive, is how long an agent goes without a
	// message before it sleeps; with every agent asleep, Run ends.
	SleepAfter time.Duration
	// Blank, when not "", is a unit's control socket (serve --blank): it
	// holds nothing of anyone's until a line there binds it to an agent.
	Blank string
	// AgentsPoll is how often serve --agents looks at its agents file for
	// an agent joining or leaving, which restarts the process.
	AgentsPoll time.Duration
	// StartAgain starts the next process when the agents file changed,
	// once this one listens no more, and gives its pid; nil starts none
	// (the next message starts it, as after every agent slept).
	StartAgain func() (pid int, err error)

	ready chan struct{} // closed once listening
	url   string        // the endpoint's address once listening

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewMain makes the program with its output and environment.
func NewMain(stdout, stderr io.Writer, env map[string]string) *Main {
	return &Main{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Env: env, AgentsPoll: agentsPoll, ready: make(chan struct{}), done: make(chan struct{})}
}

const usage = `usage: lnk-link-harness serve [flags]
       lnk-link-harness endpoint [--port N]
       lnk-link-harness configure [--home DIR] [--agent NAME] [--spec FILE]

Answers one agent's messages at its endpoint (ACP over a WebSocket per
message), and prints the endpoint's address once it listens. Each flag may
also come from the environment variable named beside it. configure writes
the agent's config.json from its spec (spec.toml).

`

// ParseFlags reads args: serve and its flags, each else from the
// environment. --help prints the usage and gives flag.ErrHelp.
func (m *Main) ParseFlags(args []string) error {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
			fmt.Fprint(m.Stderr, usage)
			return flag.ErrHelp
		}
		fmt.Fprint(m.Stderr, usage)
		return errors.New("the command is serve")
	}
	fs := flag.NewFlagSet("lnk-link-harness serve", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&m.Home, "home", m.Env["LNK_HOME"], "the Link home folder ($LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&m.Agent, "agent", m.Env[contract.EnvAgent], "the agent it answers ($LNK_AGENT, else main)")
	fs.StringVar(&m.AgentID, "agent-id", m.Env[EnvAgentID], "the agent's ID, which a Link-Agent-Id must be ($LNK_AGENT_ID, else config.json's \"id\", else none)")
	port := fs.String("port", m.Env[contract.EnvPort], "the endpoint's port on 127.0.0.1 ($LNK_PORT, else 18800; 0 picks a free one)")
	fs.StringVar(&m.KeyFile, "key-file", m.Env["LNK_KEY_FILE"], "the file holding the endpoint key ($LNK_KEY_FILE)")
	fs.StringVar(&m.Model, "model", m.Env["LNK_MODEL"], "the agent's model, over its config.json's ($LNK_MODEL); offline for the offline model")
	fs.BoolVar(&m.Stdio, "stdio", false, "speak ACP on standard input and output for the one agent (an editor's ACP client, or lnk-acp), in place of the endpoint; the key file is then optional")
	fs.DurationVar(&m.SleepAfter, "sleep-after", 0, "how long an agent goes without a message before it sleeps (its tool sessions and caches let go, its port still served); with every agent asleep the process ends; 0 never")
	fs.StringVar(&m.Blank, "blank", "", "start ahead, holding nothing of anyone's, until one line on this control socket (an absolute path) binds the unit to an agent (docs/agents.md)")
	fs.BoolVar(&m.StoreChild, "store-child", false, "start each store driver's plugin (lnk-sqlite, lnk-gcs) as this process's child, passed its driver's settings from this environment, in place of reaching the agent's store bridge run beside it (lnk-<driver> serve; docs/agents.md)")
	fs.StringVar(&m.AgentsFile, "agents", "", "answer the agents this file names, a JSON line each (name, id, home, port, key_file, env), in place of --agent, --agent-id, --key-file and --port")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no words: %q", fs.Args())
	}
	if m.Blank != "" {
		return m.blankFlags(fs)
	}
	if m.AgentsFile != "" {
		if m.Stdio {
			return errors.New("--stdio serves one agent: say --agent, not --agents")
		}
		return m.agentsFlags(fs)
	}
	if m.Agent == "" {
		m.Agent = contract.DefaultAgent
	}
	if err := contract.CheckAgentName(m.Agent); err != nil {
		return err
	}
	if m.AgentID != "" {
		if err := contract.CheckAgentID(m.AgentID); err != nil {
			return err
		}
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
	if m.KeyFile == "" && !m.Stdio {
		return errors.New("no key file: say --key-file or $LNK_KEY_FILE")
	}
	if m.Home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("find the Link home: %w (say --home)", err)
		}
		m.Home = filepath.Join(dir, "lnk")
	}
	if m.Model != "" {
		if err := contract.CheckModel(m.Model); err != nil {
			return err
		}
	}
	return nil
}

// Run serves until ctx ends or Close: it listens, prints the endpoint's
// address, finishes what a crash left, and answers messages. Stopping, it
// takes no new connection, answers those open, and waits for the turns
// running to end.
func (m *Main) Run(ctx context.Context) error {
	defer close(m.done)
	ctx, cancel := context.WithCancel(ctx)
	m.mu.Lock()
	m.cancel = cancel
	m.mu.Unlock()
	defer cancel()
	if m.Blank != "" {
		return m.runBlank(ctx)
	}
	if m.AgentsFile != "" {
		return m.runAgents(ctx)
	}
	if m.Stdio {
		return m.runStdio(ctx)
	}

	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	key, err := serve.ReadKey(m.KeyFile, logger)
	if err != nil {
		return err
	}
	// Warnings and errors go to the agent's log too, for lnk agent status.
	if p, err := store.For(m.Home, m.Agent); err == nil {
		l, closeLog := agentlog.Logger(p, m.Stderr, slog.LevelInfo)
		defer closeLog()
		logger = l
	}
	if m.AgentID == "" {
		p, err := store.For(m.Home, m.Agent)
		if err != nil {
			return err
		}
		if m.AgentID, err = serve.ReadAgentID(p); err != nil {
			return err
		}
	}
	// The agent's tools are the MCP servers its environment names
	// ($LNK_MEMORY, $LNK_TOOL_<NAME>...): serve makes them, this process's
	// for its one agent, and closes them when it sleeps.
	srv, err := serve.Start(ctx, serve.Config{
		Home:       m.Home,
		Agent:      m.Agent,
		AgentID:    m.AgentID,
		Key:        key,
		Addr:       net.JoinHostPort("127.0.0.1", strconv.Itoa(m.Port)),
		Model:      m.Model,
		Env:        m.Env,
		Logger:     logger,
		SleepAfter: m.SleepAfter,
		StoreChild: m.StoreChild,
	})
	if err != nil {
		return porthold.Explain(err, m.Port, "say another --port or $LNK_PORT (0 takes a free one)")
	}
	m.url = srv.URL()
	fmt.Fprintf(m.Stdout, "endpoint %s\n", m.url)
	close(m.ready)
	return m.serveUntil(ctx, srv, logger)
}

// serveUntil serves until ctx ends, an endpoint stops, or every agent is
// asleep; then it takes no new connection, answers the ones open until
// their clients close them, and lets the turns still running (callers
// gone) end.
func (m *Main) serveUntil(ctx context.Context, srv *serve.Server, logger *slog.Logger) error {
	select {
	case <-ctx.Done():
	case <-srv.Served():
	case <-srv.AllAsleep():
		logger.LogAttrs(ctx, slog.LevelInfo, "every agent asleep: ending; the next message starts it again")
	}
	return srv.Close()
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
