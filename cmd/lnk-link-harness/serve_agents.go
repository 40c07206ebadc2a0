package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"

	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// agentsFlags checks serve's flags beside --agents: the file names each
// agent's name, ID, key file and port, so the flags for one agent are
// refused rather than let be.
func (m *Main) agentsFlags(fs *flag.FlagSet) error {
	return m.refuseFlags(fs, "each agent's line's with --agents", "agent", "agent-id", "key-file", "port")
}

// refuseFlags refuses each of names given on the command line, saying
// whose it is instead, then checks --model.
func (m *Main) refuseFlags(fs *flag.FlagSet, whose string, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			err = errors.Join(err, fmt.Errorf("--%s is %s", f.Name, whose))
		}
	})
	if err != nil {
		return err
	}
	if m.Model != "" {
		return contract.CheckModel(m.Model)
	}
	return nil
}

// runAgents is Run for serve --agents: every agent of the file answered
// in this process, each on its own port from its own home, with its own
// key, tools and environment (the process's, under its line's env).
func (m *Main) runAgents(ctx context.Context) error {
	lines, err := readAgentsFile(m.AgentsFile)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Its lines' env may hold model keys and memory's secret URL.
	serve.WarnReadable(m.AgentsFile, "the agents file", logger)
	cfgs := make([]serve.Config, 0, len(lines))
	for _, a := range lines {
		cfg, err := m.agentConfig(a, logger)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, cfg)
	}
	srv, err := serve.StartAll(ctx, cfgs)
	if err != nil {
		return err
	}
	for _, a := range lines {
		fmt.Fprintf(m.Stdout, "endpoint %s %s\n", srv.URLOf(a.Name), a.Name)
	}
	m.url = srv.URL()
	close(m.ready)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	changed := make(chan struct{})
	go func() {
		if watchAgents(wctx, m.AgentsFile, lines, m.AgentsPoll, logger) == errAgentsChanged {
			close(changed)
		}
	}()
	select {
	case <-changed:
	case <-ctx.Done():
		return srv.Close()
	case <-srv.Served():
		return srv.Close()
	case <-srv.AllAsleep():
		logger.LogAttrs(ctx, slog.LevelInfo, "every agent asleep: ending; the next message starts it again")
		return srv.Close()
	}
	// An agent joined or left: stopped like any other stop, the next
	// process started once no port listens here, so it can listen on them
	// while this one answers the connections it has.
	logger.LogAttrs(ctx, slog.LevelInfo, "the agents file changed: restarting")
	return srv.CloseThen(func() {
		if m.StartAgain == nil {
			logger.LogAttrs(ctx, slog.LevelInfo, "not started again here: the next message starts the next process")
			return
		}
		pid, err := m.StartAgain()
		if err != nil {
			logger.LogAttrs(ctx, slog.LevelError, "start the next process", slog.String("err", err.Error()))
			return
		}
		logger.LogAttrs(ctx, slog.LevelInfo, "next process started", slog.Int("pid", pid))
	})
}

// agentConfig is the serve.Config of one agent's line: its ID the line's,
// else its config.json's.
func (m *Main) agentConfig(a agentLine, logger *slog.Logger) (serve.Config, error) {
	key, err := serve.ReadKey(a.KeyFile, logger)
	if err != nil {
		return serve.Config{}, fmt.Errorf("agent %s: %w", a.Name, err)
	}
	id := a.ID
	if id == "" {
		p, err := store.For(a.Home, a.Name)
		if err != nil {
			return serve.Config{}, err
		}
		if id, err = serve.ReadAgentID(p); err != nil {
			return serve.Config{}, fmt.Errorf("agent %s: %w", a.Name, err)
		}
	}
	env := maps.Clone(m.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, a.Env)
	return serve.Config{
		Home:       a.Home,
		Agent:      a.Name,
		AgentID:    id,
		Key:        key,
		Addr:       net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port)),
		Model:      m.Model,
		Env:        env,
		Logger:     logger.With(slog.String("agent", a.Name)),
		SleepAfter: m.SleepAfter,
		StoreChild: m.StoreChild,
	}, nil
}
