package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/lnk-dev/link/acp"
)

// lnkCommands are lnk agent chat's own commands, which the agent never
// sees.
var lnkCommands = []acp.Command{
	{Name: "help", Description: "List the chat's commands, lnk's and the agent's"},
	{Name: "quit", Description: "End the chat (so do /exit, the end of input, and Ctrl-C at the prompt)"},
}

// terminalKeys say the keys of a chat on a terminal.
const terminalKeys = `Keys: Enter sends; Alt-Enter, or a line ending in \, goes on to a new line;
a paste is one message; Up and Down go through past messages, Ctrl-R
searches them; Ctrl-C stops an answer.`

// help shows lnk's commands and the agent's, each with what it does.
func (c *chat) help(ctx context.Context) {
	c.p.line("lnk's commands:")
	c.p.line("%s", listCommands(lnkCommands))
	cmds, err := c.a.agentCommands(ctx, c.o.thread)
	switch {
	case err != nil:
		c.p.line("The agent's commands aren't known: %v", err)
	case len(cmds) == 0:
		c.p.line("The agent lists no commands of its own.")
	default:
		c.p.line("The agent's commands:")
		c.p.line("%s", listCommands(cmds))
	}
	if c.input != nil {
		c.p.line("%s", terminalKeys)
	}
}

// listCommands is cmds, one a line: the command, its input's hint, and
// what it does, in columns.
func listCommands(cmds []acp.Command) string {
	names := make([]string, len(cmds))
	width := 0
	for i, cmd := range cmds {
		names[i] = "/" + oneLine(cmd.Name)
		if cmd.Input != nil && cmd.Input.Hint != "" {
			names[i] += " <" + oneLine(cmd.Input.Hint) + ">"
		}
		width = max(width, len([]rune(names[i])))
	}
	var b strings.Builder
	for i, cmd := range cmds {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %-*s  %s", width, names[i], oneLine(cmd.Description))
	}
	return b.String()
}

// oneLine is s on one line, its control characters made spaces: an
// agent's command name, hint and description are shown as text, never as
// the terminal's codes.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)), " ")
}

// listedCommands reads a session/update's params as an
// available_commands_update: ok is false for any other update.
func listedCommands(params json.RawMessage) (cmds []acp.Command, ok bool) {
	var n struct {
		Update struct {
			SessionUpdate     string        `json:"sessionUpdate"`
			AvailableCommands []acp.Command `json:"availableCommands"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil || n.Update.SessionUpdate != acp.UpdateAvailableCommands {
		return nil, false
	}
	if n.Update.AvailableCommands == nil {
		n.Update.AvailableCommands = []acp.Command{}
	}
	return n.Update.AvailableCommands, true
}

func (a *agentConn) setCommands(cmds []acp.Command) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.commands = cmds
}

// commandsWait bounds how long /help waits for an agent to list its
// commands after its session opens: one that lists none says nothing.
const commandsWait = 3 * time.Second

// agentCommands are the agent's commands as it last listed them (each
// message's session lists them), else as it lists them to a session
// opened for the asking.
func (a *agentConn) agentCommands(ctx context.Context, thread string) ([]acp.Command, error) {
	a.mu.Lock()
	cmds := a.commands
	a.mu.Unlock()
	if cmds != nil {
		return cmds, nil
	}
	ctx, cancel := context.WithTimeout(ctx, commandsWait)
	defer cancel()
	conn, err := a.dial(ctx, 1<<20)
	if err != nil {
		return nil, err
	}
	listed := make(chan []acp.Command, 1)
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		if cmds, ok := listedCommands(params); ok && method == acp.MethodSessionUpdate {
			select {
			case listed <- cmds:
			default:
			}
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return nil, err
	}
	if err := c.Resume(ctx, thread); err != nil {
		return nil, err
	}
	select {
	case cmds := <-listed:
		a.setCommands(cmds)
		return cmds, nil
	case <-ctx.Done():
		return nil, nil
	}
}
