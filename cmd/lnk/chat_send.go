package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func (m *Main) chatSendCmd() *cobra.Command {
	var o chatOptions
	c := &cobra.Command{
		Use:   "send [--thread link:NAME] TEXT",
		Short: "send the agent one message and print its answer",
		Long: `Sends TEXT to the agent in the thread (link:chat unless said), as Link's
own connection, and prints the answer as it streams; tool calls go to
standard error. A message that joins a turn already running is answered
by that turn's answer, kept for it: send waits for it (--wait) and prints
it. The agent is reached as lnk agent chat reaches it.`,
		Example: `  lnk agent chat send "what's on my list?"
  lnk agent chat send --thread link:plans --wait 5m "summarize the plan"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, words []string) error {
			return status(sendMain(c.Context(), o, words, m.Env, m.Stdout, m.Stderr))
		},
	}
	o.register(c.Flags())
	o.registerSettings(c.Flags())
	return c
}

// sendMain is lnk agent chat send with its flags o and words, the
// message; it returns the exit status.
func sendMain(ctx context.Context, o chatOptions, words []string, env map[string]string, stdout, stderr io.Writer) int {
	text := strings.TrimSpace(strings.Join(words, " "))
	if text == "" {
		fmt.Fprintln(stderr, "lnk agent chat send: no message: say its TEXT")
		return 2
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 2
	}
	a, err := connect(ctx, o, env, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 1
	}
	code := send(ctx, a, o, text, stdout, stderr)
	if err := a.Close(); err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: stop the agent: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// send sends text and prints its answer: streamed, or, when the message
// joined a running turn, the answer that turn kept for it.
func send(ctx context.Context, a *agentConn, o chatOptions, text string, stdout, stderr io.Writer) int {
	// The answers kept for the thread before the message was sent are
	// never its answer.
	before := map[string]bool{}
	old, err := a.pending(ctx, o.thread)
	if err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 1
	}
	for _, k := range old {
		before[k.ID] = true
	}
	p := newPrinter(stdout, stderr)
	x, err := a.say(ctx, o.thread, text, p, nil)
	p.end()
	switch {
	case x.tooLong:
		fmt.Fprintf(stderr, "lnk agent chat send: the agent failed: %v\n", errTooLong)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 1
	case !x.steered:
		return 0
	}
	fmt.Fprintf(stderr, "lnk: the message joined the turn already running in %s; waiting for that turn's answer\n", o.thread)
	k, ok, err := a.waitPending(ctx, o.thread, before, o.wait)
	if err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 1
	}
	if !ok {
		fmt.Fprintf(stderr, "lnk agent chat send: no answer came within %v; lnk agent chat --thread %s shows it once it does\n", o.wait, o.thread)
		return 1
	}
	if len(k.Text) > maxAnswerRead {
		a.letGo(ctx, []string{k.ID})
		fmt.Fprintf(stderr, "lnk agent chat send: the agent failed: %v\n", errTooLong)
		return 1
	}
	fmt.Fprint(stdout, k.Text)
	if !strings.HasSuffix(k.Text, "\n") {
		fmt.Fprintln(stdout)
	}
	if err := a.letGo(ctx, []string{k.ID}); err != nil {
		fmt.Fprintf(stderr, "lnk agent chat send: %v\n", err)
		return 1
	}
	return 0
}
