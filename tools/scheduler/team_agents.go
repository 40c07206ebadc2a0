package scheduler

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/contract"
)

// Agent is one of the owner's agents on this machine, as its teammates
// reach it: a line of the agents file `serve --agents` serves.
type Agent struct {
	Name    string // its name, said as Link-Agent
	ID      string // its ID, said as Link-Agent-Id when not ""
	URL     string // its endpoint: http://127.0.0.1:18801/acp
	KeyFile string // the file holding its endpoint key
}

// AgentList lists the owner's agents on this machine, read again at each
// call (an agents file may change): the Teammates of any of them. Only
// the owner's own agents are listed, so no message goes to another
// owner's.
type AgentList func(ctx context.Context) ([]Agent, error)

var _ Teammates = AgentList(nil)

// Teammate is the endpoint of the agent named name, its key read from
// its key file now.
func (l AgentList) Teammate(ctx context.Context, name string) (Endpoint, error) {
	all, err := l(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	for _, a := range all {
		if a.Name != name {
			continue
		}
		key, err := contract.ReadKeyFile(a.KeyFile)
		if err != nil {
			return Endpoint{}, fmt.Errorf("agent %s: %w", name, err)
		}
		return Endpoint{URL: a.URL, Key: key, Agent: a.Name, AgentID: a.ID}, nil
	}
	return Endpoint{}, fmt.Errorf("agent %s: %w", name, ErrNoTeammate)
}

// Names are the names of the owner's agents.
func (l AgentList) Names(ctx context.Context) ([]string, error) {
	all, err := l(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	return names, nil
}
