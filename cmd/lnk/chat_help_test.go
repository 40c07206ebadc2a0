package main

import (
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

// /help lists lnk's own commands and the agent's, as the agent lists
// them (available_commands_update), each with what it does; it is no
// message, so the model is never asked.
func TestChatHelp(t *testing.T) {
	q := scripted.New(model.Response{Text: "answered"})
	home := t.TempDir()
	url, keyFile := scriptedAgent(t, home, q, nil, nil)
	args := []string{"--endpoint", url, "--key-file", keyFile, "--home", home}
	code, out, errOut := chatIn(t, nil, "/help\nhello\n/help\n", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	help := "lnk's commands:\n" +
		"  /help  List the chat's commands, lnk's and the agent's\n" +
		"  /quit  End the chat (so do /exit, the end of input, and Ctrl-C at the prompt)\n" +
		"The agent's commands:\n" +
		"  /model:set <model name or alias>  Run this conversation on a model, by its name or an alias; alone, say which it runs on\n" +
		"  /chat:verbose <on | off>          Show this chat the agent's tool calls, or hide them; alone, switch\n"
	// The second /help lists what the message's session was told.
	if out != help+"answered\n"+help {
		t.Fatalf("shown\n%s", out)
	}
}

// An agent's description is shown on one line, without the terminal's
// control codes it may hold.
func TestListCommands(t *testing.T) {
	got := listCommands([]acp.Command{{Name: "a", Description: "one\n\x1b[31mred\x1b[0m\ttab"}, {Name: "bb", Description: "x", Input: &acp.CommandInput{Hint: "h"}}})
	want := "  /a       one [31mred [0m tab\n  /bb <h>  x"
	if got != want {
		t.Fatalf("%q", got)
	}
}
