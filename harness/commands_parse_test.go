package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// The command parser takes its two commands, each with the argument
// its rule allows, and refuses the rest by the rule broken.
func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		text    string
		ok      bool
		name    string
		arg     string
		refusal string // the refusal's field, "" for none
	}{
		{text: "hello"},
		{text: ""},
		{text: "/"},
		{text: "/model:sets x"},
		{text: "/chat:new"},
		{text: "please /chat:verbose on"},
		{text: "/model:set", ok: true, name: cmdModelSet},
		{text: " /model:set  anthropic/claude-opus-5-5 \n", ok: true, name: cmdModelSet, arg: "anthropic/claude-opus-5-5"},
		{text: "/model:set ollama/qwen3:8b", ok: true, name: cmdModelSet, arg: "ollama/qwen3:8b"},
		{text: "/model:set a@b", ok: true, name: cmdModelSet, arg: "a@b"},
		{text: "/model:set a b", ok: true, name: cmdModelSet, refusal: "/model:set"},
		{text: "/model:set é", ok: true, name: cmdModelSet, refusal: "model"},
		{text: "/chat:verbose", ok: true, name: cmdChatVerbose},
		{text: "/chat:verbose On", ok: true, name: cmdChatVerbose, arg: "on"},
		{text: "/chat:verbose\toff", ok: true, name: cmdChatVerbose, arg: "off"},
		{text: "/chat:verbose yes", ok: true, name: cmdChatVerbose, refusal: "/chat:verbose"},
		{text: "/chat:verbose on\nand more", ok: true, name: cmdChatVerbose, refusal: "/chat:verbose"},
	} {
		cmd, ok, err := parseCommand(c.text)
		var rule *contract.RuleError
		switch {
		case ok != c.ok:
			t.Errorf("%q: ok %v", c.text, ok)
		case c.refusal != "" && (!errors.As(err, &rule) || rule.Field != c.refusal):
			t.Errorf("%q: %v, want a refusal of %s", c.text, err, c.refusal)
		case c.refusal == "" && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.refusal == "" && ok && (cmd.name != c.name || cmd.arg != c.arg):
			t.Errorf("%q: %+v", c.text, cmd)
		}
	}
}

// FuzzParseCommand proves the command parser never panics, takes only its
// two commands, and lets through only what their rules allow.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/model:set fast", "/chat:verbose", "/chat:verbose off", "/model:set a b", "hello", "/", " /model:set\u00a0x", "/chat:verbose\u2028on"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, ok, err := parseCommand(text)
		if !ok {
			if err != nil || cmd != (command{}) {
				t.Fatalf("not a command, yet %+v, %v", cmd, err)
			}
			return
		}
		if cmd.name != cmdModelSet && cmd.name != cmdChatVerbose || !strings.HasPrefix(strings.TrimSpace(text), "/"+cmd.name) {
			t.Fatalf("%q read as %+v", text, cmd)
		}
		if err != nil {
			var rule *contract.RuleError
			if !errors.As(err, &rule) {
				t.Fatalf("a refusal that names no rule: %v", err)
			}
			return
		}
		switch cmd.name {
		case cmdModelSet:
			if cmd.arg != "" && contract.CheckModel(cmd.arg) != nil {
				t.Fatalf("took a model %q the contract refuses", cmd.arg)
			}
		case cmdChatVerbose:
			if cmd.arg != "" && cmd.arg != "on" && cmd.arg != "off" {
				t.Fatalf("took /chat:verbose %q", cmd.arg)
			}
		}
	})
}

// BenchmarkNotACommand measures what looking for a command costs a
// message: the owner's text that isn't one.
func BenchmarkNotACommand(b *testing.B) {
	h := &Harness{}
	c := &conv{}
	p := acp.Prompt{Blocks: []acp.Block{{Type: "text", Text: "What's on my calendar tomorrow? /model:set is a command"}}}
	for i := 0; i < b.N; i++ {
		if cmd, err := h.ownerCommand(c, p); cmd != nil || err != nil {
			b.Fatal(cmd, err)
		}
	}
}
