package main

import "github.com/lnk-dev/link/cmd/internal/serve"

// configure is lnk-link-harness configure: the agent's spec written as
// its config.json, refused as serve would refuse it.
var configure = serve.Configure("lnk-link-harness")
