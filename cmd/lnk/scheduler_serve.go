package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/scheduler"
	toolsend "github.com/lnk-dev/link/tools/send"
)

func (m *Main) schedulerServeCmd() *cobra.Command {
	var cf chatFlags
	var o schedulerFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "run the agent's scheduler: its reminders, subagents and teammates, an MCP server",
		Long:  schedulerServeLong,
		Example: `  lnk scheduler serve --endpoint http://127.0.0.1:18800/acp
  lnk scheduler serve --agents /srv/link/agents.jsonl --agent work --listen 127.0.0.1:9102`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return schedulerServe(c.Context(), cf, o, m.Env, m.Stdout, m.Stderr)
		},
	}
	cf.register(c.Flags())
	c.Flags().StringVar(&o.listen, "listen", "127.0.0.1:0", "the loopback `address` to answer on; port 0 takes a free one")
	c.Flags().BoolVar(&o.newSecret, "new-secret", false, "make a new secret for the address, so the one $LNK_SCHEDULER holds now is answered no more")
	o.to.register(c.Flags(), "its teammates the file's other agents")
	return c
}

const schedulerServeLong = `Runs the agent's scheduler, an MCP server over Streamable HTTP on the loopback:
schedules (a message sent to the agent at a time, after a delay, every interval or
on a cron expression, in config.json's scheduler.zone, else the machine's), and the
agent's subagents (tasks) and teammates (the owner's other agents). Link Harness
reaches it at $LNK_SCHEDULER; lnk agent chat starts one itself.

Each message goes to the agent's endpoint as Link's bridge sends one (the proof,
then the key, on a WebSocket of its own), from schedule:<id>, task:<id> or
agent:<name>, exactly once across crashes of either side: it is recorded under the
agent's scheduler/ folder before it is sent, and the harness stores a message's id
once. A schedule's answer is kept by the harness for _link/recover: lnk agent chat
shows it, and Link's bridge takes a chat's to it.

Once listening it prints its address, the value for $LNK_SCHEDULER, on a line of
its own, and serves until interrupted. The address's path holds a secret kept in
the agent's scheduler/secret (0600), as lnk memory serve's.`

// schedulerFlags are lnk scheduler serve's own flags.
type schedulerFlags struct {
	listen    string
	newSecret bool
	to        endpointFlags
}

// schedulerServe serves the scheduler until ctx ends.
func schedulerServe(ctx context.Context, cf chatFlags, o schedulerFlags, env map[string]string, stdout, stderr io.Writer) error {
	p, err := cf.paths()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	to, mates, err := schedulerTarget(p, o, env)
	if err != nil {
		return err
	}
	s, err := startScheduler(ctx, p, o.listen, o.newSecret, mates, logger)
	if err != nil {
		return err
	}
	s.reach(toolsend.Target{URL: to.URL, Key: to.Key, Agent: to.Agent, AgentID: to.AgentID})
	fmt.Fprintln(stdout, s.URL())
	<-ctx.Done()
	return s.Close()
}

// schedulerTarget is the agent's endpoint as the flags say it
// (agentTarget), and its teammates: an agents file's other agents.
func schedulerTarget(p store.Paths, o schedulerFlags, env map[string]string) (scheduler.Endpoint, scheduler.Teammates, error) {
	t, err := agentTarget(p, o.to, env)
	if err != nil {
		return scheduler.Endpoint{}, nil, err
	}
	var mates scheduler.Teammates
	if o.to.agents != "" {
		mates = agentsFileMates(o.to.agents)
	}
	return scheduler.Endpoint{URL: t.URL, Key: t.Key, Agent: t.Agent, AgentID: t.AgentID}, mates, nil
}

// schedulerServer is the agent's scheduler served here: its schedules,
// its team, and where the agent's endpoint is, once known.
type schedulerServer struct {
	*mcpserve.Running
	sc   *scheduler.Scheduler
	team *scheduler.Team

	mu   sync.Mutex
	self *scheduler.Endpoint
}

// startScheduler serves the scheduler of the agent at p on laddr, at the
// secret its scheduler/secret keeps (a new one with newSecret); its
// messages wait until reach says where the agent is.
func startScheduler(ctx context.Context, p store.Paths, laddr string, newSecret bool, mates scheduler.Teammates, logger *slog.Logger) (*schedulerServer, error) {
	secret, err := scheduler.Tool.KeepSecret(ctx, p.ToolSecret(scheduler.Tool.Name), newSecret, logger)
	if err != nil {
		return nil, err
	}
	sc, err := scheduler.Open(scheduler.Options{Paths: p, Logger: logger})
	if err != nil {
		return nil, err
	}
	s := &schedulerServer{sc: sc}
	s.team, err = scheduler.NewTeam(scheduler.TeamConfig{Agent: p.Agent, Dir: scheduler.Dir(p), Self: s.endpoint, Teammates: mates, Sender: scheduler.Sent{}, Settings: teamSettings(p), Logger: logger})
	if err == nil {
		err = s.team.Start()
	}
	if err != nil {
		sc.Close()
		return nil, err
	}
	s.Running, err = scheduler.Tool.Start(ctx, scheduler.Handler(scheduler.New(sc, s.team)), laddr, secret)
	if err != nil {
		s.team.Close()
		sc.Close()
		return nil, err
	}
	return s, nil
}

// errNoEndpoint: the agent's endpoint isn't known yet (lnk agent chat
// starts the scheduler before the harness).
var errNoEndpoint = errors.New("the agent's endpoint isn't known yet")

// endpoint is where the agent answers, once reach said.
func (s *schedulerServer) endpoint(context.Context) (scheduler.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self == nil {
		return scheduler.Endpoint{}, errNoEndpoint
	}
	return *s.self, nil
}

// reach says where the agent's endpoint is (reacher): its messages go
// there.
func (s *schedulerServer) reach(t toolsend.Target) {
	s.mu.Lock()
	s.self = &scheduler.Endpoint{URL: t.URL, Key: t.Key, Agent: t.Agent, AgentID: t.AgentID}
	s.mu.Unlock()
	s.sc.SetTarget(t)
}

// Close stops serving, then the team and the schedules; what is recorded
// stays for the next start.
func (s *schedulerServer) Close() error {
	err := s.Running.Close()
	err = errors.Join(err, s.team.Close(), s.sc.Close())
	return err
}
