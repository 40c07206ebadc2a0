package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lnk-dev/link/cmd/internal/agentsfile"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	toolsend "github.com/lnk-dev/link/tools/send"
)

// endpointFlags say where a tool server that sends the agent messages of
// its own (lnk scheduler serve's reminders, lnk run serve's background
// commands' ends) finds the agent: --endpoint and --key-file, or an
// agents file's line.
type endpointFlags struct {
	endpoint string
	keyFile  string
	agents   string
}

// register adds the flags to fs; what names the agents file's other use
// for this server, if any ("its teammates the file's other agents").
func (o *endpointFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&o.endpoint, "endpoint", "", "the agent's endpoint `URL` its messages go to (default $LNK_PORT's, else http://127.0.0.1:18800/acp)")
	fs.StringVar(&o.keyFile, "key-file", "", "the `file` holding the endpoint key (default $LNK_KEY_FILE, else the agent's endpoint.key under its home)")
	usage := "an agents `file` (lnk-link-harness serve --agents): the agent's endpoint and key are its line's"
	if what != "" {
		usage += ", " + what
	}
	fs.StringVar(&o.agents, "agents", "", usage)
}

// agentTarget is the agent's endpoint as o says it: an agents file's
// line, else the endpoint and key file named (or $LNK_PORT's and the
// agent's endpoint.key).
func agentTarget(p store.Paths, o endpointFlags, env map[string]string) (toolsend.Target, error) {
	if o.agents != "" {
		if o.endpoint != "" || o.keyFile != "" {
			return toolsend.Target{}, errors.New("--agents names the agent's endpoint and key: --endpoint and --key-file are its line's")
		}
		lines, err := agentsfile.Read(o.agents)
		if err != nil {
			return toolsend.Target{}, err
		}
		for _, l := range lines {
			if l.Name != p.Agent {
				continue
			}
			if l.Port == 0 {
				return toolsend.Target{}, fmt.Errorf("agents file: agent %s is on port 0, which can't be reached by its port", p.Agent)
			}
			key, err := contract.ReadKeyFile(l.KeyFile)
			if err != nil {
				return toolsend.Target{}, fmt.Errorf("the key of %s: %w", p.Agent, err)
			}
			return toolsend.Target{URL: contract.EndpointURL(l.Port), Key: key, Agent: l.Name, AgentID: l.ID}, nil
		}
		return toolsend.Target{}, fmt.Errorf("agents file %s names no agent %s", o.agents, p.Agent)
	}
	url := o.endpoint
	if url == "" {
		port := contract.DefaultPort
		if v := env[contract.EnvPort]; v != "" {
			n, err := contract.Port(v)
			if err != nil {
				return toolsend.Target{}, err
			}
			port = n
		}
		url = contract.EndpointURL(port)
	}
	keyFile := firstOf(o.keyFile, env["LNK_KEY_FILE"], p.KeyFile())
	key, err := contract.ReadKeyFile(keyFile)
	if err != nil {
		return toolsend.Target{}, fmt.Errorf("the key of %s: %w", url, keyFileMissing(keyFile, err))
	}
	return toolsend.Target{URL: url, Key: key, Agent: p.Agent}, nil
}
