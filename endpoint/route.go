package endpoint

import (
	"errors"
	"fmt"

	"github.com/lnk-dev/link/contract"
)

// Agent is one agent an endpoint answers for: its name, its ID (unique
// across owners; empty when the endpoint answers one owner's agents) and
// its endpoint key.
type Agent struct {
	Name string
	ID   string
	Key  []byte
}

// Refusals of routing, each with its HTTP status.
var (
	// ErrUnknownAgent: no agent by that name, or an ID that names none
	// or another agent (404).
	ErrUnknownAgent = errors.New("no such agent")
	// ErrAgentShared: a name two owners' agents share, given without an
	// ID (409).
	ErrAgentShared = errors.New("agent name shared by more than one owner: give Link-Agent-Id")
	// ErrUnauthorized: the key is missing or wrong (401).
	ErrUnauthorized = errors.New("unauthorized")
)

// Route finds the agent a connection names: name is its Link-Agent
// ("" is own, the process's own agent), id its Link-Agent-Id ("" for
// none). An invalid name, a name no agent has, or an ID that is another
// agent's or disagrees with the named agent's is ErrUnknownAgent; a name
// more than one agent has, given without an ID or with one none of them
// has, is ErrAgentShared or ErrUnknownAgent. An ID no agent has, naming
// the one agent of that name whose ID the endpoint wasn't told, is
// routed by the name: Link's bridge sends the ID whenever the agent has
// one, and an endpoint answering one owner's agents (the hub, Link
// Harness without --agent-id) needn't know it.
func Route(agents []Agent, own, name, id string) (Agent, error) {
	if name == "" {
		name = own
	}
	if name == "" {
		name = contract.DefaultAgent
	}
	if err := contract.CheckAgentName(name); err != nil {
		return Agent{}, fmt.Errorf("route %.64q: %w", name, ErrUnknownAgent)
	}
	if id != "" {
		for _, a := range agents {
			if a.ID == id {
				if a.Name != name {
					return Agent{}, fmt.Errorf("route %q: no agent of that name has that Link-Agent-Id: %w", name, ErrUnknownAgent)
				}
				return a, nil
			}
		}
		if a, n := named(agents, name); n == 1 && a.ID == "" {
			return a, nil
		}
		return Agent{}, fmt.Errorf("route %q: no agent of that name has that Link-Agent-Id: %w", name, ErrUnknownAgent)
	}
	switch a, n := named(agents, name); n {
	case 0:
		return Agent{}, fmt.Errorf("route %q: %w", name, ErrUnknownAgent)
	case 1:
		return a, nil
	default:
		return Agent{}, fmt.Errorf("route %q: %w", name, ErrAgentShared)
	}
}

// named is the first of agents named name, and how many are.
func named(agents []Agent, name string) (first Agent, n int) {
	for _, a := range agents {
		if a.Name == name {
			if n == 0 {
				first = a
			}
			n++
		}
	}
	return first, n
}

// validateAgents checks a list of agents can be routed: valid names,
// keys given, IDs unique, and a name held twice only by agents with IDs.
func validateAgents(agents []Agent) error {
	if len(agents) == 0 {
		return errors.New("endpoint config: no agents")
	}
	ids := map[string]bool{}
	byName := map[string]int{}
	for _, a := range agents {
		if err := contract.CheckAgentName(a.Name); err != nil {
			return fmt.Errorf("endpoint config: agent %q: %w", a.Name, err)
		}
		if len(a.Key) == 0 {
			return fmt.Errorf("endpoint config: agent %q: no key", a.Name)
		}
		if a.ID != "" {
			if ids[a.ID] {
				return fmt.Errorf("endpoint config: agent %q: ID %q held twice", a.Name, a.ID)
			}
			ids[a.ID] = true
		}
		byName[a.Name]++
	}
	for _, a := range agents {
		if byName[a.Name] > 1 && a.ID == "" {
			return fmt.Errorf("endpoint config: agent %q: a name held by more than one agent needs each one's ID", a.Name)
		}
	}
	return nil
}
