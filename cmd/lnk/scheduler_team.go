package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// localHomes are the Link homes whose agents lnk runs in this process,
// each its agents' teammates, by home: what the scheduler started beside
// each agent (local_tools.go) reaches the others by.
var localHomes struct {
	mu sync.Mutex
	m  map[string]*homeMates
}

// matesAt is the teammates of the agents under home run here, made with
// env (the first agent's environment) when there are none yet; status
// is told of each teammate started.
func matesAt(home string, env map[string]string, status io.Writer) *homeMates {
	localHomes.mu.Lock()
	defer localHomes.mu.Unlock()
	if h := localHomes.m[home]; h != nil {
		if status != io.Discard {
			h.mu.Lock()
			h.status = status
			h.mu.Unlock()
		}
		return h
	}
	h := &homeMates{home: home, env: env, status: status}
	if localHomes.m == nil {
		localHomes.m = map[string]*homeMates{}
	}
	localHomes.m[home] = h
	return h
}

// homeMates are the agents under a Link home, the teammates of each
// other when lnk agent chat runs one of them: each is served here, in
// this process, when first messaged (a Link Harness and its tools, as
// lnk agent chat starts its own), until Close.
type homeMates struct {
	home   string
	env    map[string]string // lnk's environment, each agent's started here
	status io.Writer         // told of each agent started

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
		h.started, h.own = map[string]*agentConn{}, map[string]bool{}
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
// served here from now on if it isn't yet. Two asking at once for one
// not served start it once.
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
	conn := h.started[name]
	h.mu.Unlock()
	if conn == nil {
		// Started without the lock: the agent's own scheduler, started
		// with it, comes back here. It lives until Close, not until the
		// call that first named it ends.
		started, err := startAgent(context.WithoutCancel(ctx), chatOptions{}, h.env, h.home, p, "127.0.0.1:0", io.Discard)
		if err != nil {
			return scheduler.Endpoint{}, fmt.Errorf("start agent %s: %w", name, err)
		}
		h.mu.Lock()
		fmt.Fprintf(h.status, "lnk: started agent %s here, messaged by a teammate\n", name)
		h.mu.Unlock()
		h.mu.Lock()
		if h.started == nil {
			h.started, h.own = map[string]*agentConn{}, map[string]bool{}
		}
		if conn = h.started[name]; conn == nil {
			conn = started
			h.started[name], h.own[name] = started, true
		}
		h.mu.Unlock()
		if conn != started {
			started.Close() // another started it first
		}
	}
	return scheduler.Endpoint{URL: conn.url, Key: conn.key, Agent: name}, nil
}

// Close stops the agents started here for their teammates, and forgets
// the home: the next agent run here starts afresh.
func (h *homeMates) Close() error {
	localHomes.mu.Lock()
	if localHomes.m[h.home] == h {
		delete(localHomes.m, h.home)
	}
	localHomes.mu.Unlock()
	h.mu.Lock()
	var stop []*agentConn
	for name := range h.own {
		stop = append(stop, h.started[name])
	}
	h.started, h.own = nil, nil
	h.mu.Unlock()
	var err error
	for _, a := range stop {
		err = errors.Join(err, a.Close())
	}
	return err
}
