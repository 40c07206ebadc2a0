package mcptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
)

// Tools reaches agents' tools over MCP: harness.Tools, with the tools
// section's text (harness.Instructor). It holds only what can be made
// again: each agent's lists and its sessions.
type Tools struct {
	cfg    Config
	client *mcp.Client

	mu     sync.Mutex
	agents map[string]*agentTools
	closed bool

	stop    chan struct{}
	life    context.Context         // ended by Close, and with it every call and start
	end     context.CancelCauseFunc // ends life
	wg      sync.WaitGroup          // the sweeper
	calls   sync.WaitGroup          // calls in flight, added under mu before Close
	closing sync.WaitGroup          // sessions closing in the background
}

// agentTools is one agent's tools in this process.
type agentTools struct {
	wmu     sync.Mutex // held while tool-lists.json is written
	mu      sync.Mutex
	read    bool                           // tool-lists.json was read
	file    map[string]listing             // tool-lists.json as read, by tool
	written []byte                         // its bytes as last read or written
	lists   map[string]listing             // listed by this process, by tool
	failed  map[string]bool                // tried by this process and not listed
	retryAt map[string]int64               // when a tool never listed is tried again (Unix ns)
	current []server                       // its servers, as last read
	kept    map[string]*session            // kept sessions, by tool
	turns   map[string]map[string]*session // the turns' sessions, by thread then tool
	opening map[string]*opening            // sessions starting, by key
}

// New makes a Tools of cfg, checked, and starts its sweep of kept
// sessions past their limits; Close stops it and ends every session.
func New(cfg Config) (*Tools, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	life, end := context.WithCancelCause(context.Background())
	t := &Tools{
		life:   life,
		end:    end,
		cfg:    cfg,
		client: mcp.NewClient(&mcp.Implementation{Name: "link-harness", Version: "1"}, &mcp.ClientOptions{Logger: cfg.Logger}),
		agents: map[string]*agentTools{},
		stop:   make(chan struct{}),
	}
	t.wg.Add(1)
	go t.sweeper()
	return t, nil
}

// agent is agent's tools, made the first time it is asked.
func (t *Tools) agent(agent string) *agentTools {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.agents[agent]
	if a == nil {
		a = &agentTools{
			file:    map[string]listing{},
			lists:   map[string]listing{},
			failed:  map[string]bool{},
			retryAt: map[string]int64{},
			kept:    map[string]*session{},
			turns:   map[string]map[string]*session{},
			opening: map[string]*opening{},
		}
		t.agents[agent] = a
	}
	return a
}

// prepare reads agent's servers from its environment and, once a
// process, its tool-lists.json.
func (t *Tools) prepare(ctx context.Context, agent string) (*agentTools, []server) {
	a := t.agent(agent)
	srv := servers(t.cfg.Env(agent))
	a.mu.Lock()
	a.current = srv
	read := a.read
	a.mu.Unlock()
	if !read {
		t.readFile(ctx, agent, a)
	}
	return a, srv
}

// readFile reads agent's tool-lists.json, once: a file that can't be
// read is as none, and is written again when a list is made.
func (t *Tools) readFile(ctx context.Context, agent string, a *agentTools) {
	path, err := t.cfg.ToolLists(agent)
	if err != nil {
		t.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "find tool-lists.json", slog.String("agent", agent), slog.String("err", err.Error()))
		return
	}
	lists, b, err := readLists(ctx, path)
	if err != nil {
		t.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "read tool-lists.json", slog.String("agent", agent), slog.String("err", err.Error()))
		if ctx.Err() != nil {
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.read {
		return
	}
	a.read = true
	if lists != nil {
		a.file, a.written = lists, b
	}
}

// listingOf is srv's list: this process's, else the file's, each only
// if it was made at srv's address.
func (a *agentTools) listingOf(srv server) (listing, bool) {
	h := addressHash(srv.addr)
	if l, ok := a.lists[srv.name]; ok && l.Address == h {
		return l, true
	}
	if l, ok := a.file[srv.name]; ok && l.Address == h {
		return l, true
	}
	return listing{}, false
}

// Offer lists the tools agent's model is offered: each call of each of
// its tools as <tool>__<call>, in order of name, those narrowed allows.
// A process lists every tool at once at its first turn (within
// StartTimeout); a tool it can't list is offered as tool-lists.json
// lists it, or, never listed, left out, tried again after RetryAfter.
func (t *Tools) Offer(ctx context.Context, agent string, narrowed *[]string) ([]model.Tool, error) {
	a, srv := t.prepare(ctx, agent)
	now := t.cfg.Now().UnixNano()
	var need []server
	a.mu.Lock()
	for _, s := range srv {
		if _, ok := a.lists[s.name]; ok && a.lists[s.name].Address == addressHash(s.addr) {
			continue
		}
		_, known := a.listingOf(s)
		switch {
		case !a.failed[s.name]:
			need = append(need, s) // not yet tried by this process
		case !known && now >= a.retryAt[s.name]:
			need = append(need, s) // never listed: tried again
		}
	}
	a.mu.Unlock()
	if len(need) > 0 {
		var wg sync.WaitGroup
		for _, s := range need {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if sess, err := t.acquire(ctx, agent, a, s, ""); err == nil && sess != nil {
					t.release(a, sess)
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.offer(srv, narrowed), nil
}

// offer is the tools of srv narrowed allows, in order of name.
func (a *agentTools) offer(srv []server, narrowed *[]string) []model.Tool {
	var out []model.Tool
	for _, s := range srv {
		l, ok := a.listingOf(s)
		if !ok {
			continue
		}
		for _, c := range l.Calls {
			name := offered(s.name, c.Name)
			if contract.Allowed(narrowed, name) {
				out = append(out, model.Tool{Name: name, Description: c.Description, Schema: string(c.Schema)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ForHome is New for a program's agents under home: every agent's
// tools are those env names (the process's own environment, for a
// program of one agent), and its tool-lists.json is in its folder,
// <home>/agents/<agent>, where store.For places it (TestForHomeToolLists
// holds the two together; this package doesn't link the store, so the
// hub's adapter doesn't). Link Harness's serve and the hub's adapter
// make their tools so.
func ForHome(home string, env map[string]string, logger *slog.Logger) (*Tools, error) {
	if home == "" {
		return nil, errors.New("tools: no home folder")
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	return New(Config{
		Env: func(string) map[string]string { return env },
		ToolLists: func(agent string) (string, error) {
			if err := contract.CheckAgentName(agent); err != nil {
				return "", err
			}
			return filepath.Join(abs, "agents", agent, "tool-lists.json"), nil
		},
		Logger: logger,
	})
}
