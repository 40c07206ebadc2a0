package main

import (
	"strings"
	"testing"
)

// lnk's command line as a person meets it: help by command and by
// lnk help, Go's -flag spelling, refusals with status 2, completion
// scripts for bash, zsh and fish, and the version.
func TestCommandLine(t *testing.T) {
	home, _, _ := chatHome(t)
	for _, c := range []struct {
		args     []string
		code     int
		out, err string // what stdout and stderr hold
	}{
		{[]string{}, 0, "usage: lnk COMMAND", ""},
		{[]string{"--help"}, 0, "Checking Link:", ""},
		{[]string{"help", "agent", "chat"}, 0, "usage: lnk agent chat [flags]", ""},
		{[]string{"help", "agent", "chat"}, 0, "Reaching it:\n      --endpoint URL", ""},
		{[]string{"agent", "chat", "send", "--help"}, 0, "Examples:\n  lnk agent chat send", ""},
		{[]string{"agent"}, 0, "usage: lnk agent COMMAND", ""},
		{[]string{"agent", "bogus"}, 2, "", `lnk agent: unknown command "bogus"`},
		{[]string{"bogus"}, 2, "", `unknown command "bogus"`},
		{[]string{"agent", "chat", "show", "--nope", "x"}, 2, "", "lnk agent chat show: flag provided but not defined: --nope\n\nusage: lnk agent chat show THREAD [flags]"},
		{[]string{"agent", "chat", "show", "-nope", "x"}, 2, "", "flag provided but not defined: -n"},
		// Go's single-dash spelling of a long flag.
		{[]string{"agent", "chat", "show", "-home", home, "-agent=main", "telegram:42"}, 0, "question 1", ""},
		{[]string{"agent", "chat", "show", "--home", home, "--", "-agent"}, 1, "", "lnk agent chat show: "},
		{[]string{"version"}, 0, "module  github.com/lnk-dev/link\n  commit  ", ""},
		{[]string{"version", "--json"}, 0, `"module": "github.com/lnk-dev/link"`, ""},
		{[]string{"--version"}, 0, "lnk ", ""},
		{[]string{"completion", "bash"}, 0, "__start_lnk", ""},
		{[]string{"completion", "zsh"}, 0, "#compdef lnk", ""},
		{[]string{"completion", "fish"}, 0, "complete -c lnk", ""},
		{[]string{"completion", "tcsh"}, 2, "", ""},
	} {
		code, out, errOut := chatRun(c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.err) {
			t.Errorf("lnk %q: %d\nstdout %q\nstderr %q\nwant %d, stdout with %q, stderr with %q", c.args, code, out, errOut, c.code, c.out, c.err)
		}
	}
}

// Completion offers the commands, the flags, and a flag's values.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "agent", "ch"}, []string{"chat"}},
		{[]string{"__complete", "agent", "chat", ""}, []string{"send", "show", "convert", "fork"}},
		{[]string{"__complete", "agent", "chat", "--ag"}, []string{"--agent"}},
		{[]string{"__complete", "agent", "chat", "convert", "--to", ""}, []string{"log", "compact"}},
	} {
		code, out, errOut := chatRun(c.args...)
		if code != 0 {
			t.Fatalf("%q: %d %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: %q lacks %q", c.args, out, w)
			}
		}
	}
}
