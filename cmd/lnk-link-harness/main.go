// Command lnk-link-harness is Link Harness's server: lnk-link-harness
// serve answers one agent's messages at its endpoint, keeping nothing
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
	"strings"
	"sync"
	"syscall"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain(os.Stdout, os.Stderr, environ())
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

func environ() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Main is the program: ParseFlags, then Run until its context ends (or
// Close), so tests run the real program on port 0.
type Main struct {
	Stdout, Stderr io.Writer
	Env            map[string]string

	// What the flags (or the environment) said.
	Home, Agent, KeyFile, Model string
	Port                        int

	ready chan struct{} // closed once listening
	url   string        // the endpoint's address once listening

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewMain makes the program with its output and environment.
func NewMain(stdout, stderr io.Writer, env map[string]string) *Main {
	return &Main{Stdout: stdout, Stderr: stderr, Env: env, ready: make(chan struct{}), done: make(chan struct{})}
}

const usage = `usage: lnk-link-harness serve [flags]

Answers one agent's messages at its endpoint (ACP over a WebSocket per
message), and prints the endpoint's address once it listens. Each flag may
also come from the environment variable named beside it.

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
	port := fs.String("port", m.Env[contract.EnvPort], "the endpoint's port on 127.0.0.1 ($LNK_PORT, else 18800; 0 picks a free one)")
	fs.StringVar(&m.KeyFile, "key-file", m.Env["LNK_KEY_FILE"], "the file holding the endpoint key ($LNK_KEY_FILE)")
	fs.StringVar(&m.Model, "model", m.Env["LNK_MODEL"], "the agent's model, over its config.json's ($LNK_MODEL); offline for the offline model")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no words: %q", fs.Args())
	}
	if m.Agent == "" {
		m.Agent = contract.DefaultAgent
	}
	if err := contract.ParseAgentName(m.Agent); err != nil {
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
	if m.Model != "" {
		if err := contract.ParseModel(m.Model); err != nil {
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

	b, err := os.ReadFile(m.KeyFile)
	if err != nil {
		return fmt.Errorf("read the key file: %w", err)
	}
	key, err := contract.ParseKey(b)
	if err != nil {
		return fmt.Errorf("key file %s: %w", m.KeyFile, err)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	pr := newProviders(m.Env)
	modelFlag := m.Model
	h, err := harness.New(harness.Config{
		Home:    m.Home,
		Drivers: drivers,
		Openers: openers,
		Settings: func(ctx context.Context, p store.Paths) (harness.Settings, error) {
			return readSettings(ctx, p, modelFlag)
		},
		Route:    pr.route,
		Provider: pr.provider,
		Logger:   logger,
	})
	if err != nil {
		return err
	}
	srv, err := endpoint.New(endpoint.Config{
		Agents:  []endpoint.Agent{{Name: m.Agent, Key: key}},
		Own:     m.Agent,
		Handler: endpoint.AgentHandler{Agent: h, Logger: logger},
		Logger:  logger,
	})
	if err != nil {
		h.Close()
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(m.Port)))
	if err != nil {
		h.Close()
		return fmt.Errorf("listen: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	m.url = contract.EndpointURL(port)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.WithoutCancel(ctx), ln) }()
	fmt.Fprintf(m.Stdout, "endpoint %s\n", m.url)
	close(m.ready)
	h.Start(m.Agent)

	var serr error
	select {
	case <-ctx.Done():
	case serr = <-served:
	}
	// Stop taking connections and answer the ones open, then let the
	// turns still running (callers gone) end.
	cerr := srv.Close()
	if serr == nil {
		serr = <-served
	}
	herr := h.Close()
	return errors.Join(serr, cerr, herr)
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

// drivers opens the ways of keeping the agent's conversations: the log
// and compact always, SQLite when its file is there (it makes the file
// when opened, so an agent that never used it gets none).
func drivers(p store.Paths) (map[string]store.Conversations, error) {
	out := map[string]store.Conversations{store.Log: log.Open(p.Chats()), store.Compact: compact.Open(p.Chats())}
	if _, err := os.Stat(filepath.Join(p.Chats(), sqlite.File)); err == nil || wantsSQLite(p) {
		d, err := sqlite.Open(p.Chats())
		if err != nil {
			return nil, err
		}
		out[sqlite.Name] = d
	}
	return out, nil
}

// wantsSQLite says whether the agent's settings begin new conversations
// in SQLite.
func wantsSQLite(p store.Paths) bool {
	s, err := readSettings(context.Background(), p, "")
	return err == nil && s.Conversations == sqlite.Name
}

// openers opens each way on any folder, for a convert stopped midway.
func openers(p store.Paths) map[string]store.Opener {
	return map[string]store.Opener{
		store.Log:     func(chats string) (store.Conversations, error) { return log.Open(chats), nil },
		store.Compact: func(chats string) (store.Conversations, error) { return compact.Open(chats), nil },
		sqlite.Name:   func(chats string) (store.Conversations, error) { return sqlite.Open(chats) },
	}
}
