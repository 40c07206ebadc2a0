package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/lnk-dev/link/contract"
)

// EnvAgentID names the environment's agent ID (--agent-id).
const EnvAgentID = "LNK_AGENT_ID"

const endpointUsage = `usage: lnk-link-harness endpoint [--port N]
       lnk-link-harness endpoint --agents FILE [--agent NAME]

Prints, as a JSON string, the address of the agent's ACP on this machine's
loopback ("http://127.0.0.1:18800/acp"): at --port, else $LNK_PORT, else
18800; with --agents, at the port the agents file gives the agent (--agent,
else $LNK_AGENT, else main). Link reads it to find the harness (the
contract's "lnk-<name> endpoint"); nothing needs to be running.

`

// runEndpoint is lnk-link-harness endpoint: it prints the endpoint's
// address as a JSON string and returns the exit code.
func runEndpoint(args []string, env map[string]string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lnk-link-harness endpoint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, endpointUsage)
		fs.PrintDefaults()
	}
	port := fs.String("port", env[contract.EnvPort], "the endpoint's port ($LNK_PORT, else 18800)")
	agents := fs.String("agents", "", "the agents file of serve --agents: the agent's port is its line's")
	agent := fs.String("agent", env[contract.EnvAgent], "with --agents, the agent ($LNK_AGENT, else main)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lnk-link-harness endpoint: it takes no words: %q\n", fs.Args())
		return 2
	}
	p, err := contract.Port(*port)
	if *agents != "" {
		p, err = agentPort(*agents, *agent)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lnk-link-harness endpoint: %v\n", err)
		return 2
	}
	b, _ := json.Marshal(contract.EndpointURL(p))
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

// agentPort is agent's port as the agents file at path gives it.
func agentPort(path, agent string) (int, error) {
	if agent == "" {
		agent = contract.DefaultAgent
	}
	lines, err := readAgentsFile(path)
	if err != nil {
		return 0, err
	}
	for _, a := range lines {
		if a.Name != agent {
			continue
		}
		if a.Port == 0 {
			return 0, fmt.Errorf("agent %q has port 0 in %s: a free one, known only once it runs", agent, path)
		}
		return a.Port, nil
	}
	return 0, fmt.Errorf("no agent %q in %s", agent, path)
}
