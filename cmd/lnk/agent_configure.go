package main

import (
	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/cmd/internal/agentspec"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
)

func (m *Main) configureCmd() *cobra.Command {
	var home, agent, spec string
	c := &cobra.Command{
		Use:   "configure",
		Short: "write the agent's config.json from its spec (spec.toml), every key checked",
		Long: `Reads the agent's spec, a TOML file (--spec, else ` + agentspec.FileName + ` in the agent's
folder), and writes it as the agent's config.json, which the harness reads
at each turn (lnk agent chat's, and lnk-link-harness serve's). A key it
doesn't know, a value of the wrong type or out of its bounds is refused,
naming its line, and config.json is left as it was. Every table is in
docs/agents.md ("The agent's spec").`,
		Example: `  lnk agent configure
  lnk agent configure --agent research --spec research.toml`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return serve.Configure("lnk agent").Configure(firstOf(home, m.Env["LNK_HOME"]), firstOf(agent, m.Env[contract.EnvAgent]), spec, m.Stdout)
		},
	}
	fs := c.Flags()
	fs.StringVar(&home, "home", "", "the Link home `folder` (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&agent, "agent", "", "the agent's `name` (default $"+contract.EnvAgent+", else main)")
	fs.StringVar(&spec, "spec", "", "the agent's spec, a TOML `file` (default "+agentspec.FileName+" in the agent's folder)")
	return c
}
