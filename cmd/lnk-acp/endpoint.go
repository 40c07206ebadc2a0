package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/lnk-dev/link/contract"
)

const endpointUsage = `usage: lnk-acp endpoint [--port N]

Prints, as a JSON string, the address of the agent's ACP on this machine's
loopback ("http://127.0.0.1:18800/acp"), where lnk-acp serves it: at
--port, else $LNK_PORT, else 18800. Link reads it to find the agent (the
contract's "lnk-<name> endpoint"); nothing needs to be running.

`

// runEndpoint is lnk-acp endpoint: it prints the endpoint's address as a
// JSON string and returns the exit code.
func runEndpoint(args []string, env map[string]string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lnk-acp endpoint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, endpointUsage)
		fs.PrintDefaults()
	}
	port := fs.String("port", env[contract.EnvPort], "the endpoint's port ($LNK_PORT, else 18800)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lnk-acp endpoint: it takes no words: %q\n", fs.Args())
		return 2
	}
	p, err := contract.Port(*port)
	if err != nil {
		fmt.Fprintf(stderr, "lnk-acp endpoint: %v\n", err)
		return 2
	}
	b, _ := json.Marshal(contract.EndpointURL(p))
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
