package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/conformance/reference"
	"github.com/lnk-dev/link/contract"
)

// Exit statuses of lnk conformance.
const (
	exitPassed     = 0 // every check ran and passed
	exitFailed     = 1 // a check failed (with --reference, a check not run too)
	exitUsage      = 2
	exitIncomplete = 3 // none failed, but some were not run: not a pass
)

const conformanceLong = `Checks an endpoint against the endpoint contract (spec/endpoint.txt), one
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
not run, which is not a pass; 2 for bad usage.`

// conformanceOptions are lnk conformance's flags.
type conformanceOptions struct {
	endpointURL, keyFile, agent, agentID string
	pid                                  int
	nameless                             bool
	shared, toolPrompt, tool, recoverMsg string
	timeout                              time.Duration
	ref                                  bool
}

func (m *Main) conformanceCmd() *cobra.Command {
	var o conformanceOptions
	c := &cobra.Command{
		Use:   "conformance --endpoint URL --key-file FILE --agent NAME [flags]",
		Short: "check an endpoint against the endpoint contract, one line per rule",
		Long:  conformanceLong,
		Example: `  lnk conformance --reference
  lnk conformance --endpoint http://127.0.0.1:18800/acp --key-file endpoint.key --agent main --pid 4242`,
		GroupID: groupCheck,
		Args:    cobra.ArbitraryArgs, // lnk conformance URL
		RunE: func(c *cobra.Command, words []string) error {
			return conformanceMain(c.Context(), c.Flags(), o, words, m.Stdout, m.Stderr)
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.endpointURL, "endpoint", "", "the endpoint's ACP address: http://127.0.0.1:18800/acp")
	fs.StringVar(&o.keyFile, "key-file", "", "a file holding the agent's endpoint key")
	fs.StringVar(&o.agent, "agent", "", "the agent's name, sent as Link-Agent")
	fs.StringVar(&o.agentID, "agent-id", "", "the agent's ID, sent as Link-Agent-Id (checks routing by ID)")
	fs.IntVar(&o.pid, "pid", 0, "the endpoint's process, whose socket TCP_NODELAY is read from")
	fs.BoolVar(&o.nameless, "nameless", false, "the endpoint answers a connection naming no agent as --agent (checks LNK_AGENT routing)")
	fs.StringVar(&o.shared, "shared", "", "a name two owners' agents share at the endpoint (checks 409)")
	fs.StringVar(&o.toolPrompt, "tool-prompt", "", "a message that makes the agent call --tool")
	fs.StringVar(&o.tool, "tool", "", "the tool --tool-prompt calls, as the harness names it (memory__search)")
	fs.StringVar(&o.recoverMsg, "recover-prompt", "", "a message whose turn ends only once its caller has gone")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long each check may take")
	fs.BoolVar(&o.ref, "reference", false, "check the kit's reference endpoint, started in this process")
	groupFlags(fs, "The endpoint", "endpoint", "key-file", "agent", "agent-id", "reference")
	groupFlags(fs, "Hooks (each check a hook needs runs only with it)", "pid", "nameless", "shared", "tool-prompt", "tool", "recover-prompt")
	return c
}

// conformanceMain runs lnk conformance with its flags fs, o and words.
func conformanceMain(ctx context.Context, fs *pflag.FlagSet, o conformanceOptions, words []string, stdout, stderr io.Writer) error {
	bad := badUsage
	if len(words) == 1 && o.endpointURL == "" && !o.ref {
		o.endpointURL = words[0] // lnk conformance URL
	} else if len(words) > 0 {
		return bad("unexpected %q", strings.Join(words, " "))
	}
	if o.timeout <= 0 {
		return bad("--timeout is positive")
	}
	var target conformance.Target
	if o.ref {
		var others []string
		fs.Visit(func(f *pflag.Flag) {
			if f.Name != "reference" && f.Name != "timeout" {
				others = append(others, "--"+f.Name)
			}
		})
		if len(others) > 0 {
			return bad("--reference checks the reference endpoint with its own hooks: it takes no %s", strings.Join(others, ", "))
		}
		e, err := reference.Start(ctx, reference.Options{})
		if err != nil {
			return err
		}
		defer e.Close()
		target = e.Target()
		fmt.Fprintf(stdout, "reference endpoint at %s (agent %s, process %d)\n", e.URL, target.Agent, target.PID)
	} else {
		t, err := o.target()
		if err != nil {
			return err
		}
		target = t
	}
	target.Timeout = o.timeout

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
		return status(exitFailed)
	case notRun > 0 && o.ref:
		fmt.Fprintln(stderr, "lnk conformance: the reference endpoint offers every hook, so every check must run")
		return status(exitFailed)
	case notRun > 0:
		fmt.Fprintln(stderr, "lnk conformance: not every check ran, which is not a pass")
		return status(exitIncomplete)
	}
	return nil
}

// target is the endpoint the options name (--endpoint, --key-file,
// --agent and what it offers), checked.
func (o conformanceOptions) target() (conformance.Target, error) {
	bad := badUsage
	switch {
	case o.endpointURL == "":
		return conformance.Target{}, bad("--endpoint or --reference is needed")
	case o.keyFile == "":
		return conformance.Target{}, bad("--key-file is needed")
	case o.agent == "":
		return conformance.Target{}, bad("--agent is needed")
	case (o.toolPrompt == "") != (o.tool == ""):
		return conformance.Target{}, bad("--tool-prompt and --tool go together")
	}
	key, err := contract.ReadKeyFile(o.keyFile)
	if err != nil {
		return conformance.Target{}, bad("%v", err)
	}
	target := conformance.Target{
		URL: o.endpointURL, Key: key, Agent: o.agent, AgentID: o.agentID,
		Nameless: o.nameless, Shared: o.shared, PID: o.pid,
	}
	if o.toolPrompt != "" {
		target.ToolCall = &conformance.ToolCall{Prompt: o.toolPrompt, Tool: o.tool}
	}
	if o.recoverMsg != "" {
		target.Recover = &conformance.Recover{Prompt: o.recoverMsg}
	}
	return target, nil
}
