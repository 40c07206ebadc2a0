package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The owner's commands Link Harness takes, named as ACP lists them
// (without the slash).
const (
	cmdModelSet    = "model:set"
	cmdChatVerbose = "chat:verbose"
)

// Commands lists the owner's commands Link Harness takes, for acp.Serve's
// available_commands_update: every connection's session is sent them,
// the same list for every agent, made once.
func (h *Harness) Commands(agent string) []acp.Command { return commands }

// commands are the owner's commands, as Commands lists them; acp only
// encodes them.
var commands = []acp.Command{
	{Name: cmdModelSet, Description: "Run this conversation on a model, by its name or an alias; alone, say which it runs on", Input: &acp.CommandInput{Hint: "model name or alias"}},
	{Name: cmdChatVerbose, Description: "Show this chat the agent's tool calls, or hide them; alone, switch", Input: &acp.CommandInput{Hint: "on | off"}},
}

var _ acp.Commander = (*Harness)(nil)

// command is one of the owner's commands, a prompt's whole text.
type command struct {
	name string // cmdModelSet or cmdChatVerbose
	arg  string // what follows the name: a model's name or alias, on or off; "" for nothing

	// Of /model:set NAME, once resolved: the model and its provider.
	model, provider string
}

// parseCommand reads text as one of the owner's commands: ok is false for
// a text that is none (it goes to the model as it came), and err names
// the rule a command breaks. A command is the whole text, space around it
// aside: its name, then at most one word.
func parseCommand(text string) (cmd command, ok bool, err error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return command{}, false, nil
	}
	words := strings.Fields(text)
	name := words[0][1:]
	if name != cmdModelSet && name != cmdChatVerbose {
		return command{}, false, nil
	}
	cmd = command{name: name}
	switch len(words) {
	case 1:
	case 2:
		cmd.arg = words[1]
	default:
		return cmd, true, &contract.RuleError{Field: "/" + name, Rule: "/" + name + " takes one word after it, at most"}
	}
	switch name {
	case cmdModelSet:
		if cmd.arg != "" {
			if err := contract.CheckModel(cmd.arg); err != nil {
				return cmd, true, err
			}
		}
	case cmdChatVerbose:
		switch strings.ToLower(cmd.arg) {
		case "", "on", "off":
			cmd.arg = strings.ToLower(cmd.arg)
		default:
			return cmd, true, &contract.RuleError{Field: "/" + name, Rule: "/" + name + " takes on or off, or nothing to switch"}
		}
	}
	return cmd, true, nil
}

// ownerCommand is the command p is, checked, when it is the owner's (no
// _meta.link.from) and its whole text is one: nil for any other prompt,
// which is a message. A stranger's text that looks like a command is a
// message for the model. A model /model:set names is resolved here
// (alias, name, route), so a bad one is refused before anything is
// stored.
func (h *Harness) ownerCommand(c *conv, p acp.Prompt) (*command, error) {
	if p.Link.From != "" || len(p.Blocks) == 0 {
		return nil, nil
	}
	if !strings.HasPrefix(strings.TrimLeftFunc(p.Blocks[0].Text, unicode.IsSpace), "/") {
		return nil, nil // most messages: no command, nothing more read
	}
	texts := make([]string, len(p.Blocks))
	for i, b := range p.Blocks {
		if b.Type != "text" {
			return nil, nil // a command carries nothing else
		}
		texts[i] = b.Text
	}
	cmd, ok, err := parseCommand(strings.Join(texts, "\n"))
	if !ok || err != nil {
		return nil, err
	}
	if cmd.name == cmdModelSet && cmd.arg != "" {
		if cmd.model, cmd.provider, err = h.resolveModel(c, cmd.arg); err != nil {
			return nil, err
		}
	}
	return &cmd, nil
}

// resolveModel is the model a name or alias stands for, and its
// provider: refused when the name isn't one (contract.CheckModel) or no
// provider serves it (Route, and Serves when set).
func (h *Harness) resolveModel(c *conv, asked string) (name, provider string, err error) {
	name = c.settings.Alias(asked)
	if err := contract.CheckModel(name); err != nil {
		return "", "", err
	}
	route, err := h.cfg.Route(name)
	if err == nil && h.cfg.Serves != nil {
		err = h.cfg.Serves(name)
	}
	if err != nil {
		return "", "", &contract.RuleError{Field: "model", Rule: err.Error()}
	}
	return name, route.Provider, nil
}

// command does an owner's command under the conversation's lease, as a
// message is stored: with a turn running, it is stored at once and that
// turn's next round reads it. Its event is its record (a model_set, a
// chat_set); a bare /model:set changes nothing and stores nothing. It is
// answered at once with one agent_message_chunk saying what holds now,
// and end_turn.
func (h *Harness) command(ctx context.Context, c *conv, cmd *command, s acp.Stream) (acp.Outcome, error) {
	text, err := h.runCommand(ctx, c, cmd)
	if err != nil {
		return acp.Outcome{}, err
	}
	s.Chunk(ctx, text) // with _link/taken before it, in one write
	if r, ok := s.(acp.Reporter); ok && r.Reporting() && cmd.name == cmdModelSet && cmd.model != "" {
		r.ConfigOptions(ctx, h.modelOption(c, cmd.model)) // the editor's model picker (sessions.go)
	}
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

// runCommand does cmd under the conversation's lease, as command says,
// and gives what holds now.
func (h *Harness) runCommand(ctx context.Context, c *conv, cmd *command) (string, error) {
	holder := h.holder()
	err := c.lease(ctx, holder, h.cfg.LeaseTTL)
	running := errors.Is(err, store.ErrLeaseHeld)
	if err != nil && !running {
		return "", fmt.Errorf("take the lease of %s: %w", c.thread, err)
	}
	t := h.newTurn(c, holder)
	text, err := t.command(ctx, cmd, !running)
	if !running {
		if rerr := c.release(context.WithoutCancel(ctx), holder); rerr != nil && err == nil {
			err = fmt.Errorf("let the lease of %s go: %w", c.thread, rerr)
		}
	}
	if err != nil {
		return "", err
	}
	if !running {
		h.answerJoined(context.WithoutCancel(ctx), c)
	}
	return text, nil
}

// command stores cmd's event and says what holds now. A bare command
// reads the conversation first, through the events kept from its last
// turn when held (the lease is this command's).
func (t *turn) command(ctx context.Context, cmd *command, held bool) (string, error) {
	if cmd.arg == "" {
		if held {
			t.resume()
			defer t.keep(t.with.clock.now)
		}
		if err := t.refresh(ctx); err != nil {
			return "", err
		}
	}
	switch cmd.name {
	case cmdModelSet:
		if cmd.arg == "" {
			name := t.modelName()
			if name == "" {
				return "No model is set for this conversation or this agent: /model:set NAME sets one.", nil
			}
			return "This conversation runs on " + name + ".", nil
		}
		if _, err := t.with.store.append(ctx, t.c, store.Event{Kind: store.KindModelSet, Model: cmd.model, Provider: cmd.provider}); err != nil {
			return "", err
		}
		named := cmd.model
		if cmd.arg != cmd.model {
			named = cmd.arg + " (" + cmd.model + ")"
		}
		return "This conversation runs on " + named + " from now on.", nil
	}
	on := cmd.arg == "on"
	if cmd.arg == "" {
		// Nothing chosen yet switches calls on: what the chat showed
		// without a choice is its bridge's, not known here.
		cur := t.verbose()
		on = cur == nil || !*cur
	}
	if _, err := t.with.store.append(ctx, t.c, store.Event{Kind: store.KindChatSet, Verbose: &on}); err != nil {
		return "", err
	}
	if on {
		return "This chat is shown the agent's tool calls from now on.", nil
	}
	return "This chat is no longer shown the agent's tool calls.", nil
}

// answerJoined answers, in a task of its own, a message that joined the
// conversation while a command held its lease: it was told steered, and
// no turn runs to answer it. Its answer is kept, as a finished turn's.
func (h *Harness) answerJoined(ctx context.Context, c *conv) {
	last, err := store.Latest(ctx, c.router, c.thread, sweepWindow)
	if err != nil {
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "look for a message that joined a command", slog.String("thread", c.thread), slog.String("err", err.Error()))
		return
	}
	if !waiting(last) {
		return
	}
	holder := h.holder()
	if err := c.lease(ctx, holder, h.cfg.LeaseTTL); err != nil {
		return // a turn took it, and answers the message; or the sweep will
	}
	if !h.task(func(ctx context.Context) { h.finish(ctx, c, holder) }) {
		c.release(ctx, holder)
	}
}

// verbose is whether the conversation's tool calls are shown
// (_meta.link.activity): its last /chat:verbose, else the agent's
// setting; nil when neither says.
func (t *turn) verbose() *bool {
	if _, e := t.lastSet(); e != nil {
		v := *e.Verbose
		return &v
	}
	if v := t.cp.Verbose; v != nil { // set before the window's start
		on := *v
		return &on
	}
	return t.c.settings.Verbose
}
