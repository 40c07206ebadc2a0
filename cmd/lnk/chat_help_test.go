package main

import (
	"strings"
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

// An agent's command, its hint and its description are shown on one
// line, without the terminal's control codes they may hold.
func TestListCommands(t *testing.T) {
	got := listCommands([]acp.Command{{Name: "a", Description: "one\n\x1b[31mred\x1b[0m\ttab"}, {Name: "bb", Description: "x", Input: &acp.CommandInput{Hint: "h"}},
		{Name: "c\x1b]0;pwned\x07", Description: "y", Input: &acp.CommandInput{Hint: "\x1b[2Jh\nint"}}})
	want := "  /a                      one [31mred [0m tab\n  /bb <h>                 x\n  /c ]0;pwned <[2Jh int>  y"
	if got != want {
		t.Fatalf("%q", got)
	}
}

// FuzzListedCommands proves an available_commands_update from the agent,
// whatever its bytes, never panics listedCommands, and that /help shows
// its commands one a line, with none of the terminal's control codes.
func FuzzListedCommands(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"t","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"model:set","description":"d","input":{"hint":"h"}}]}}`,
		`{"update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"a\u001b[31m","description":"\n","input":{"hint":"\u009b2J"}}]}}`,
		`{"update":{"sessionUpdate":"available_commands_update","availableCommands":null}}`,
		`{"update":{"sessionUpdate":"agent_message_chunk"}}`,
		`[`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		cmds, ok := listedCommands(params)
		if !ok {
			return
		}
		if cmds == nil {
			t.Fatal("a list read as nil")
		}
		shown := listCommands(cmds)
		if n := strings.Count(shown, "\n"); len(cmds) > 0 && n != len(cmds)-1 {
			t.Fatalf("%d commands shown on %d lines: %q", len(cmds), n+1, shown)
		}
		for _, r := range shown {
			if r != '\n' && (r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0) {
				t.Fatalf("shown with control code U+%04X: %q", r, shown)
			}
		}
	})
}
