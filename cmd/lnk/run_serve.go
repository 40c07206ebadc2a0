package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/mcpserve"
	runtool "github.com/lnk-dev/link/tools/run"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/sandbox"
	sendtool "github.com/lnk-dev/link/tools/send"
)

func (m *Main) runServeCmd() *cobra.Command {
	var cf chatFlags
	var laddr string
	var newSecret bool
	var to endpointFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "run the agent's run tool: an MCP server running commands in its workspace, each in a kernel sandbox",
		Long:  runServeLong,
		Example: `  lnk run serve
  lnk run serve --agent research --listen 127.0.0.1:18901
  lnk run serve --new-secret
  lnk run serve --agents /srv/link/agents.jsonl --agent work --listen 127.0.0.1:9103`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServe(c.Context(), cf, laddr, newSecret, to, m.Env, m.Stdout, m.Stderr)
		},
	}
	cf.register(c.Flags())
	c.Flags().StringVar(&laddr, "listen", "127.0.0.1:0", "the loopback `address` to answer on; port 0 takes a free one")
	c.Flags().BoolVar(&newSecret, "new-secret", false, "make a new secret for the address, so the one $LNK_RUN holds now is answered no more")
	to.register(c.Flags(), "")
	return c
}

const runServeLong = `Runs the agent's run tool, an MCP server over Streamable HTTP on the loopback:
run__command runs a program, or a shell line, in the agent's workspace (its files/
folder), each call in a kernel sandbox of its own (Landlock and namespaces: the
workspace read-write, the system read-only, nothing else of the home, no network
unless config.json's "run" allows it), killed with all it started at its timeout.
Link Harness reaches it at $LNK_RUN; lnk agent chat starts one itself.
Once listening it prints its address, the value for $LNK_RUN, on a line of its
own, and serves until interrupted. The address's path holds a secret kept in the
agent's run/secret (0600), as lnk memory serve's; --new-secret makes a new one.
Where the kernel offers no sandbox, every call is refused saying why; config.json's
"run": {"sandbox": "off"} runs commands unconfined (README, "Running commands").

Its background commands (run__start) outlive it, each under lnk started again as
its supervisor, kept in the agent's run/ folder; a run serve started again finds
them. Each one's end is sent to the agent's endpoint (--endpoint, else $LNK_PORT's;
--agents FILE: its line's) as a message from run:<id>, exactly once: recorded in
run/outbox first, and sent again until the harness has it.`

// runServe serves run until ctx ends, its background commands' ends sent
// where to says the agent is. An agent not found there (no key yet) has
// them wait in run/outbox, said on stderr: run__command needs no endpoint.
func runServe(ctx context.Context, cf chatFlags, laddr string, newSecret bool, to endpointFlags, env map[string]string, stdout, stderr io.Writer) error {
	p, err := cf.paths()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t, terr := agentTarget(p, to, env)
	if terr != nil && (to.endpoint != "" || to.keyFile != "" || to.agents != "") {
		return terr
	}
	r, err := startRun(ctx, p, laddr, newSecret, logger)
	if err != nil {
		return err
	}
	if terr != nil {
		fmt.Fprintf(stderr, "lnk run serve: background commands' ends wait in %s until a run serve can reach the agent: %v\n", filepath.Join(filepath.Dir(p.ToolSecret(runtool.Tool.Name)), "outbox"), terr)
	} else {
		r.reach(t)
	}
	fmt.Fprintln(stdout, r.URL())
	<-ctx.Done()
	return r.Close()
}

// runServer is run served for one agent: its calls, its background
// commands, and the deliverer of their ends.
type runServer struct {
	*mcpserve.Running
	bg      *background.Manager
	deliver *sendtool.Deliverer
	stop    context.CancelFunc
}

// sandboxOnce finds the sandbox's program once a process.
var sandboxOnce sync.Once

// installedSandbox is lnk-sandbox installed beside lnk or in $PATH.
func installedSandbox() (string, error) {
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "lnk-sandbox")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	return exec.LookPath("lnk-sandbox")
}

// startRun serves run for the agent at p on laddr, at the secret the
// agent's run/secret keeps (a new one with newSecret), with its
// background commands kept in run/ and their ends recorded in run/outbox,
// sent once reach says where the agent is.
func startRun(ctx context.Context, p store.Paths, laddr string, newSecret bool, logger *slog.Logger) (*runServer, error) {
	dir := filepath.Dir(p.ToolSecret(runtool.Tool.Name))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	secret, err := runtool.Tool.KeepSecret(ctx, p.ToolSecret(runtool.Tool.Name), newSecret, logger)
	if err != nil {
		return nil, err
	}
	box, err := sendtool.OpenOutbox(filepath.Join(dir, "outbox"), nil)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	dctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d := &sendtool.Deliverer{Outbox: box, Logger: logger}
	d.Start(dctx)
	// The sandbox's trampoline as a program of its own when there is one
	// (beside lnk, in $PATH, or built from the checkout): lnk's own start-up
	// would cost each call tens of milliseconds. It is each background
	// command's supervisor too, as long as its command runs. A build from
	// the checkout is made meanwhile, never holding up the start (it took
	// over a minute under load): lnk is the trampoline until it is done.
	sandboxOnce.Do(func() {
		if prog, err := installedSandbox(); err == nil {
			sandbox.UseProgram(prog)
			return
		}
		go func() {
			if prog, err := drivers.FromSource("sandbox"); err == nil {
				sandbox.UseProgram(prog)
			}
		}()
	})
	bg, err := background.Open(background.Options{Dir: dir, Exe: sandbox.Program, Teller: runtool.Teller{Deliver: d}, Logger: logger})
	if err != nil {
		stop()
		d.Wait()
		return nil, err
	}
	opts := runtool.Options{Paths: p, Logger: logger, Background: bg}
	r, err := runtool.Tool.Start(ctx, runtool.Handler(runtool.New(opts), opts), laddr, secret)
	if err != nil {
		bg.Close()
		stop()
		d.Wait()
		return nil, err
	}
	return &runServer{Running: r, bg: bg, deliver: d, stop: stop}, nil
}

// reach says where the agent's endpoint is: the ends of its background
// commands go there.
func (s *runServer) reach(t sendtool.Target) { s.deliver.SetTarget(t) }

// Close stops serving and watching; the background commands run on, and
// the next start tells their ends.
func (s *runServer) Close() error {
	err := s.Running.Close()
	s.bg.Close()
	s.stop()
	s.deliver.Wait()
	return err
}
