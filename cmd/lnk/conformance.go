package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/conformance/reference"
	"github.com/lnk-dev/link/contract"
)

func init() {
	register(command{
		words:   "conformance",
		summary: "check an endpoint against the endpoint contract, one line per rule",
		run:     runConformance,
	})
}

// Exit statuses of lnk conformance.
const (
	exitPassed     = 0 // every check ran and passed
	exitFailed     = 1 // a check failed (with --reference, a check not run too)
	exitUsage      = 2
	exitIncomplete = 3 // none failed, but some were not run: not a pass
)

const conformanceUsage = `usage:
  lnk conformance --endpoint URL --key-file FILE --agent NAME [options]
  lnk conformance --reference

Checks an endpoint against the endpoint contract (spec/endpoint.txt), one
rule to a line:
  PASS name — the rule's words
  FAIL name — the rule's words: what was seen
  NOT RUN name — the rule's words: the hook it lacks

--reference starts the kit's reference endpoint in this process, on
127.0.0.1 at a free port, and checks it with every hook: every check must
run and pass.

Against a running endpoint, checks whose hook the flags don't give are not
run: the TCP_NODELAY read needs --pid, the tool call --tool-prompt and
--tool, recovery --recover-prompt; the _meta.link checks' and the tool
narrowing's proof that the model saw nothing needs a recording model,
which only an in-process target (conformance.Run) offers.

The kit sends its messages on threads link:conformance-<run>-<check>, and
its recover check takes whatever answers are waiting: point it at an
agent kept for testing, not one people are talking to.

Exit status: 0 when every check ran and passed; 1 when one failed (with
--reference, when one was not run too); 3 when none failed but some were
not run, which is not a pass; 2 for bad usage.

options:
`

func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lnk conformance", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		endpointURL = fs.String("endpoint", "", "the endpoint's ACP address: http://127.0.0.1:18800/acp")
		keyFile     = fs.String("key-file", "", "a file holding the agent's endpoint key")
		agent       = fs.String("agent", "", "the agent's name, sent as Link-Agent")
		agentID     = fs.String("agent-id", "", "the agent's ID, sent as Link-Agent-Id (checks routing by ID)")
		pid         = fs.Int("pid", 0, "the endpoint's process, whose socket TCP_NODELAY is read from")
		nameless    = fs.Bool("nameless", false, "the endpoint answers a connection naming no agent as --agent (checks LNK_AGENT routing)")
		shared      = fs.String("shared", "", "a name two owners' agents share at the endpoint (checks 409)")
		toolPrompt  = fs.String("tool-prompt", "", "a message that makes the agent call --tool")
		tool        = fs.String("tool", "", "the tool --tool-prompt calls, as the harness names it (memory__search)")
		recoverMsg  = fs.String("recover-prompt", "", "a message whose turn ends only once its caller has gone")
		timeout     = fs.Duration("timeout", 10*time.Second, "how long each check may take")
		ref         = fs.Bool("reference", false, "check the kit's reference endpoint, started in this process")
	)
	usage := func(w io.Writer) {
		fmt.Fprint(w, conformanceUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lnk conformance: "+format+"\n\n", a...)
		usage(stderr)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitPassed
		}
		return bad("%v", err)
	}
	if fs.NArg() == 1 && *endpointURL == "" && !*ref {
		*endpointURL = fs.Arg(0) // lnk conformance URL
	} else if fs.NArg() > 0 {
		return bad("unexpected %q", strings.Join(fs.Args(), " "))
	}
	if *timeout <= 0 {
		return bad("--timeout is positive")
	}

	var target conformance.Target
	if *ref {
		var others []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "reference" && f.Name != "timeout" {
				others = append(others, "--"+f.Name)
			}
		})
		if len(others) > 0 {
			return bad("--reference checks the reference endpoint with its own hooks: it takes no %s", strings.Join(others, ", "))
		}
		e, err := reference.Start(ctx, reference.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "lnk conformance: %v\n", err)
			return exitFailed
		}
		defer e.Close()
		target = e.Target()
		fmt.Fprintf(stdout, "reference endpoint at %s (agent %s, process %d)\n", e.URL, target.Agent, target.PID)
	} else {
		switch {
		case *endpointURL == "":
			return bad("--endpoint or --reference is needed")
		case *keyFile == "":
			return bad("--key-file is needed")
		case *agent == "":
			return bad("--agent is needed")
		case (*toolPrompt == "") != (*tool == ""):
			return bad("--tool-prompt and --tool go together")
		}
		raw, err := os.ReadFile(*keyFile)
		if err != nil {
			return bad("read key file: %v", err)
		}
		key, err := contract.ParseKey(raw)
		if err != nil {
			return bad("key file %s: %v", *keyFile, err)
		}
		target = conformance.Target{
			URL: *endpointURL, Key: key, Agent: *agent, AgentID: *agentID,
			Nameless: *nameless, Shared: *shared, PID: *pid,
		}
		if *toolPrompt != "" {
			target.ToolCall = &conformance.ToolCall{Prompt: *toolPrompt, Tool: *tool}
		}
		if *recoverMsg != "" {
			target.Recover = &conformance.Recover{Prompt: *recoverMsg}
		}
	}
	target.Timeout = *timeout

	results, err := conformance.Check(ctx, target)
	if err != nil {
		return bad("%v", err)
	}
	var passed, failed, notRun int
	for _, r := range results {
		fmt.Fprintln(stdout, r)
		switch r.Status {
		case conformance.Pass:
			passed++
		case conformance.Fail:
			failed++
		default:
			notRun++
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d not run\n", passed, failed, notRun)
	switch {
	case failed > 0:
		return exitFailed
	case notRun > 0 && *ref:
		fmt.Fprintln(stderr, "lnk conformance: the reference endpoint offers every hook, so every check must run")
		return exitFailed
	case notRun > 0:
		fmt.Fprintln(stderr, "lnk conformance: not every check ran, which is not a pass")
		return exitIncomplete
	}
	return exitPassed
}
