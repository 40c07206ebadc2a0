package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"

	"github.com/lnk-dev/link/store"
	sendtool "github.com/lnk-dev/link/tools/send"
)

// localTool is one of Link's tool servers lnk agent chat starts beside a
// Link Harness it runs here, reached by the harness at the variable env
// names. Each tool is one entry of localTools.
type localTool struct {
	name string // memory, run: what the status line calls it
	env  string // LNK_MEMORY: the variable the harness finds it by
	// start serves the tool for the agent at p on the loopback, at a free
	// port and the secret its folder keeps; env is lnk's environment.
	start func(ctx context.Context, home string, p store.Paths, env map[string]string, logger *slog.Logger) (localServer, error)
}

// localServer is a tool server started here: its URL (with its secret,
// the harness's alone), its host:port (what may be said), and its end.
type localServer interface {
	URL() string
	Host() string
	Close() error
}

// localTools are the tools lnk agent chat starts beside the agent, in
// this order.
var localTools = []localTool{
	{name: "memory", env: "LNK_MEMORY", start: func(ctx context.Context, home string, p store.Paths, env map[string]string, logger *slog.Logger) (localServer, error) {
		return startMemory(ctx, chatFlags{home: home, agent: p.Agent}, p, env, "127.0.0.1:0", false, logger)
	}},
	{name: "run", env: "LNK_RUN", start: func(ctx context.Context, _ string, p store.Paths, _ map[string]string, logger *slog.Logger) (localServer, error) {
		return startRun(ctx, p, "127.0.0.1:0", false, logger)
	}},
	{name: "file tool", env: "LNK_FILE", start: func(ctx context.Context, _ string, p store.Paths, _ map[string]string, logger *slog.Logger) (localServer, error) {
		return startFile(ctx, p, "127.0.0.1:0", false, logger)
	}},
	{name: "scheduler", env: "LNK_SCHEDULER", start: func(ctx context.Context, home string, p store.Paths, env map[string]string, logger *slog.Logger) (localServer, error) {
		return startScheduler(ctx, p, "127.0.0.1:0", false, matesAt(home, env, io.Discard), logger)
	}},
}

// startedTool is a local tool's server, running.
type startedTool struct {
	localTool
	srv localServer
}

// startTools starts each of localTools the environment doesn't name
// already, and gives env again with their variables set. A tool that
// fails to start closes those started before it.
func startTools(ctx context.Context, home string, p store.Paths, env map[string]string, logger *slog.Logger) ([]startedTool, map[string]string, error) {
	var started []startedTool
	for _, t := range localTools {
		if env[t.env] != "" {
			continue
		}
		srv, err := t.start(ctx, home, p, env, logger)
		if err != nil {
			closeTools(started)
			return nil, nil, fmt.Errorf("start %s of %s: %w", t.name, p.Agent, err)
		}
		started = append(started, startedTool{t, srv})
		if len(started) == 1 {
			env = maps.Clone(env)
		}
		env[t.env] = srv.URL()
	}
	return started, env, nil
}

// reacher is a local tool that sends the agent messages of its own (a
// background command's end): it is told where the agent's endpoint is
// once the harness beside it has started.
type reacher interface{ reach(sendtool.Target) }

// reachTools tells each tool started that sends the agent messages where
// the agent's endpoint is.
func reachTools(started []startedTool, t sendtool.Target) {
	for _, s := range started {
		if r, ok := s.srv.(reacher); ok {
			r.reach(t)
		}
	}
}

// sayTools says on status where each tool started answers, never its
// secret.
func sayTools(status io.Writer, started []startedTool) {
	for _, t := range started {
		fmt.Fprintf(status, "lnk: its %s answers on %s (at the secret address the agent has as $%s)\n", t.name, t.srv.Host(), t.env)
	}
}

// closeTools stops the tools started, the last first.
func closeTools(started []startedTool) error {
	var err error
	for i := len(started) - 1; i >= 0; i-- {
		err = errors.Join(err, started[i].srv.Close())
	}
	return err
}
