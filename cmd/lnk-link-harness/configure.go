package main

import (
	"github.com/lnk-dev/link/cmd/internal/agentspec"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/store"
)

// configure is lnk-link-harness configure: the agent's spec written as
// its config.json in its folder (store.For), refused as serve would
// refuse it (serve.ParseSettings), so a spec that configures is one the
// harness runs on.
var configure = agentspec.Program{
	Name: "lnk-link-harness",
	Folder: func(home, agent string) (string, error) {
		p, err := store.For(home, agent)
		return p.Root, err
	},
	Check: func(config []byte) error {
		_, err := serve.ParseSettings(config, "")
		return err
	},
}
