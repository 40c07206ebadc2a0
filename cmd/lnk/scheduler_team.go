package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/lnk-dev/link/cmd/internal/agentsfile"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/scheduler"
)

// The scheduler's subagents and teammates (tools/scheduler's Team), as
// lnk scheduler serve and lnk agent chat make them: the agent's jobs in
// <home>/scheduler, its own endpoint, its teammates, and its settings
// read from config.json at each call.

// teamSettings reads the agent's config.json's "scheduler" table at each
// call (scheduler.ReadSettings): max_tasks, how many tasks run at once.
func teamSettings(p store.Paths) func(context.Context) (scheduler.TeamSettings, error) {
	return func(ctx context.Context) (scheduler.TeamSettings, error) {
		s, err := scheduler.ReadSettings(ctx, p)
		return scheduler.TeamSettings{MaxTasks: s.MaxTasks}, err
	}
}

// agentsFileMates are the agents of the agents file at path, read again
// at each call, each at its line's port: the teammates of any of them.
// A line on port 0 (a free one, for tests) can't be reached by its
// port, and is left out.
func agentsFileMates(path string) scheduler.AgentList {
	return func(context.Context) ([]scheduler.Agent, error) {
		lines, err := agentsfile.Read(path)
		if err != nil {
			return nil, err
		}
		var out []scheduler.Agent
		for _, l := range lines {
			if l.Port == 0 {
				continue
			}
			out = append(out, scheduler.Agent{Name: l.Name, ID: l.ID, URL: contract.EndpointURL(l.Port), KeyFile: l.KeyFile})
		}
		return out, nil
	}
}

// homeMates are the agents under a Link home, the teammates of each
// other when lnk agent chat runs one of them: each is served here, in
// this process, when first messaged (start: a Link Harness and its
// tools, as lnk agent chat starts its own), until Close.
type homeMates struct {
	home  string
	start func(ctx context.Context, p store.Paths) (*agentConn, error)

	mu      sync.Mutex
	started map[string]*agentConn
	own     map[string]bool // those started by start, which Close stops
}

var _ scheduler.Teammates = (*homeMates)(nil)

// serving says conn is agent's, served here already (lnk agent chat's own).
func (h *homeMates) serving(agent string, conn *agentConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started == nil {
		h.started = map[string]*agentConn{}
	}
	h.started[agent] = conn
}

// Names are the agents under the home: each folder of <home>/agents
// named as an agent is.
func (h *homeMates) Names(context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(h.home, "agents"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the agents: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && contract.CheckAgentName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Teammate is the endpoint of the agent named name under the home,
// served here from now on if it isn't yet.
func (h *homeMates) Teammate(ctx context.Context, name string) (scheduler.Endpoint, error) {
	if err := contract.CheckAgentName(name); err != nil {
		return scheduler.Endpoint{}, err
	}
	p, err := store.For(h.home, name)
	if err != nil {
		return scheduler.Endpoint{}, err
	}
	if info, err := os.Lstat(p.Root); err != nil || !info.IsDir() {
		return scheduler.Endpoint{}, fmt.Errorf("agent %s: %w", name, scheduler.ErrNoTeammate)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	conn := h.started[name]
	if conn == nil {
		if conn, err = h.start(ctx, p); err != nil {
			return scheduler.Endpoint{}, fmt.Errorf("start agent %s: %w", name, err)
		}
		if h.started == nil {
			h.started = map[string]*agentConn{}
			h.own = map[string]bool{}
		}
		h.started[name], h.own[name] = conn, true
	}
	return scheduler.Endpoint{URL: conn.url, Key: conn.key, Agent: name}, nil
}

// Close stops the agents started here for their teammates.
func (h *homeMates) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var err error
	for name := range h.own {
		err = errors.Join(err, h.started[name].Close())
		delete(h.started, name)
	}
	h.own = nil
	return err
}
