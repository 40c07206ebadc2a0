package harness

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// activities are the _meta.link.activity of each tool_call and
// tool_call_update streamed: "true", "false", or "none".
func activities(x *exchange) []string {
	var out []string
	for _, n := range x.Notes() {
		u := n.Update
		if u.SessionUpdate != acp.UpdateToolCall && u.SessionUpdate != acp.UpdateToolCallUpdate {
			continue
		}
		switch {
		case u.Meta == nil || u.Meta.Link.Activity == nil:
			out = append(out, "none")
		case *u.Meta.Link.Activity:
			out = append(out, "true")
		default:
			out = append(out, "false")
		}
	}
	return out
}

// search is a model's answer that calls memory__search once.
func search(id string) model.Response {
	return model.Response{Calls: []model.ToolCall{{ID: id, Name: "memory__search", Input: `{"q":"x"}`}}}
}

// command sends text as the owner's command and checks it was answered
// at once, end_turn, with a confirmation and nothing asked of the model.
func (r *rig) command(thread, text string) string {
	r.t.Helper()
	calls := len(r.requests(thread))
	res, x, err := r.say(thread, text, nil)
	if err != nil {
		r.t.Fatalf("%s: %v", text, err)
	}
	if res.StopReason != acp.StopEndTurn || res.Steered() {
		r.t.Fatalf("%s answered %+v", text, res)
	}
	chunks := 0
	for _, n := range x.Notes() {
		if n.Update.SessionUpdate == acp.UpdateMessageChunk {
			chunks++
		}
	}
	if chunks != 1 || x.text() == "" {
		r.t.Fatalf("%s: %d chunks, %q; want one confirmation", text, chunks, x.text())
	}
	if n := len(r.requests(thread)); n != calls {
		r.t.Fatalf("%s reached the model", text)
	}
	return x.text()
}

// /chat:verbose chooses the activity of each tool call the conversation
// streams: on, off, or bare to switch; a conversation that chose none
// has the agent's setting, and with none either, calls go unmarked.
func TestVerboseCommand(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:60"
	if got := r.command(thread, "/chat:verbose on"); !strings.Contains(got, "shown") {
		t.Fatalf("confirmed %q", got)
	}
	r.q.Push(search("c1"), model.Response{Text: "found"})
	_, x, err := r.say(thread, "look it up", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "true true" {
		t.Fatalf("after on, calls streamed with %s", got)
	}
	if got := r.command(thread, "  /chat:verbose OFF\n"); !strings.Contains(got, "no longer") {
		t.Fatalf("confirmed %q", got)
	}
	// The conversation's choice wins over the agent's.
	on := true
	r.setSettings(func(s *Settings) { s.Verbose = &on })
	r.q.Push(search("c2"), model.Response{Text: "found"})
	if _, x, err = r.say(thread, "again", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "false false" {
		t.Fatalf("after off, calls streamed with %s", got)
	}
	r.command(thread, "/chat:verbose") // off, switched: on
	var sets []bool
	for _, e := range r.events(thread) {
		if e.Kind == store.KindChatSet {
			if e.Verbose == nil || e.From != "" {
				t.Fatalf("chat_set %+v", e)
			}
			sets = append(sets, *e.Verbose)
		}
	}
	if len(sets) != 3 || !sets[0] || sets[1] || !sets[2] {
		t.Fatalf("chat_set events %v, want on, off, on", sets)
	}

	// None chosen: the agent's setting, else nothing.
	off := false
	r.setSettings(func(s *Settings) { s.Verbose = &off })
	r.q.Push(search("c3"), model.Response{Text: "found"})
	if _, x, err = r.say("telegram:61", "look", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "false false" {
		t.Fatalf("the agent's off: calls streamed with %s", got)
	}
	r.setSettings(func(s *Settings) { s.Verbose = nil })
	r.q.Push(search("c4"), model.Response{Text: "found"})
	if _, x, err = r.say("telegram:61", "look", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "none none" {
		t.Fatalf("no choice anywhere: calls streamed with %s", got)
	}
	// Bare with nothing chosen switches calls on.
	r.command("telegram:62", "/chat:verbose")
	if ev := r.events("telegram:62"); len(ev) != 1 || ev[0].Kind != store.KindChatSet || !*ev[0].Verbose {
		t.Fatalf("events %+v", ev)
	}
}

// A command is the owner's: a text from anyone else that looks like one is
// a message, and reaches the model as its text. A text that names no
// command of the harness's is a message too, the owner's included.
func TestCommandFromOthers(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:63"
	r.q.Push(model.Response{Text: "heard"}, model.Response{Text: "heard"}, model.Response{Text: "heard"})
	if _, _, err := r.say(thread, "/chat:verbose on", json.RawMessage(`{"link":{"from":"person:telegram:7","fromName":"Grace"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.say(thread, "/model:set nope/x", json.RawMessage(`{"link":{"from":"agent:helper"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.say(thread, "/chat:new", nil); err != nil {
		t.Fatal(err)
	}
	reqs := r.requests(thread)
	if len(reqs) != 3 || !strings.Contains(reqs[0].LastUserText(), "/chat:verbose on") || !strings.Contains(reqs[1].LastUserText(), "/model:set nope/x") || !strings.HasSuffix(reqs[2].LastUserText(), "\n/chat:new") {
		for _, q := range reqs {
			t.Logf("asked with %q", q.LastUserText())
		}
		t.Fatalf("the model was asked %d times", len(reqs))
	}
	ev := r.events(thread)
	if n := count(ev, isKind(store.KindMessage)); n != 3 || count(ev, isKind(store.KindChatSet))+count(ev, isKind(store.KindModelSet)) != 0 {
		t.Fatalf("events %+v", ev)
	}
}

// /model:set NAME keeps the model (a name or an alias) as a model_set
// from the owner; the next turn's request names it; bare, it says which.
func TestModelSetCommand(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:64"
	if got := r.command(thread, "/model:set"); got != "This conversation runs on offline." {
		t.Fatalf("bare: %q", got)
	}
	if n := len(r.events(thread)); n != 0 {
		t.Fatalf("a bare /model:set stored %d events", n)
	}
	if got := r.command(thread, "/model:set fast"); !strings.Contains(got, "fast (anthropic/claude-test)") {
		t.Fatalf("confirmed %q", got)
	}
	r.q.Push(model.Response{Text: "on claude"})
	if _, _, err := r.say(thread, "hello", nil); err != nil {
		t.Fatal(err)
	}
	if reqs := r.requests(thread); len(reqs) != 1 || reqs[0].Model != "anthropic/claude-test" {
		t.Fatalf("the next turn's request: %+v", reqs)
	}
	ev := r.events(thread)
	if ev[0].Kind != store.KindModelSet || ev[0].Model != "anthropic/claude-test" || ev[0].Provider == "" || ev[0].From != "" {
		t.Fatalf("model_set %+v", ev[0])
	}
	if got := r.command(thread, "/model:set"); got != "This conversation runs on anthropic/claude-test." {
		t.Fatalf("bare after: %q", got)
	}
	r.command(thread, "/model:set openai/gpt-test")
	r.q.Push(model.Response{Text: "on gpt"})
	if _, _, err := r.say(thread, "and now?", nil); err != nil {
		t.Fatal(err)
	}
	if reqs := r.requests(thread); reqs[len(reqs)-1].Model != "openai/gpt-test" {
		t.Fatalf("a name: %q", reqs[len(reqs)-1].Model)
	}
}

// A command that breaks a rule is refused, saying which, before anything
// is stored and before the model sees it.
func TestCommandRefused(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:65"
	for _, c := range []struct{ text, field string }{
		{"/model:set bad!name", "model"},
		{"/model:set " + strings.Repeat("m", 129), "model"},
		{"/model:set nope/model", "model"},
		{"/model:set fast now", "/model:set"},
		{"/chat:verbose maybe", "/chat:verbose"},
		{"/chat:verbose on off", "/chat:verbose"},
	} {
		_, _, err := r.say(thread, c.text, nil)
		var rpc *acp.Error
		if !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams || !strings.HasPrefix(rpc.Message, c.field+": ") {
			t.Errorf("%q: %v; want invalid params naming %s", c.text, err, c.field)
		}
	}
	if ev := r.events(thread); len(ev) != 0 {
		t.Fatalf("refused commands stored %+v", ev)
	}
	if n := len(r.requests(thread)); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
}

// A command is no message waiting for an answer: the next turn answers
// its own message once, and a sweep finds nothing to finish.
func TestCommandNotWaiting(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:66"
	r.q.Push(model.Response{Text: "one"})
	if _, _, err := r.say(thread, "first", nil); err != nil {
		t.Fatal(err)
	}
	r.command(thread, "/chat:verbose off")
	r.command(thread, "/model:set fast")
	if ev := r.events(thread); waiting(ev) {
		t.Fatalf("a message waits after commands: %+v", ev)
	}
	if err := r.h.Sweep(r.t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	r.q.Push(model.Response{Text: "two"})
	_, x, err := r.say(thread, "second", nil)
	if err != nil || x.text() != "two" {
		t.Fatalf("second: %q, %v", x.text(), err)
	}
	if n := len(r.requests(thread)); n != 2 {
		t.Fatalf("the model was asked %d times, want once a message", n)
	}
	if r.q.Left() != 0 {
		t.Fatal("an answer left unasked")
	}
	// The copy for people shows the messages and answers, not the commands.
	dir, _ := r.folders().Paths.Conversation(thread)
	if b, err := os.ReadFile(filepath.Join(dir, "chat.md")); err != nil || strings.Contains(string(b), "/chat:verbose") || !strings.Contains(string(b), "second") {
		t.Fatalf("chat.md: %v\n%s", err, b)
	}
}

// A command while a turn runs is stored and answered at once; the turn's
// next round reads it: its calls are marked as chosen, and it runs on the
// model set.
func TestCommandDuringTurn(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:67"
	on := true
	r.setSettings(func(s *Settings) { s.Verbose = &on })
	r.q.Push(search("c1"), search("c2"), model.Response{Text: "done"})
	reached, release := r.holdNext()
	type said struct {
		x   *exchange
		err error
	}
	done := make(chan said, 1)
	go func() {
		_, x, err := r.say(thread, "look twice", nil)
		done <- said{x, err}
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never asked the model")
	}
	r.command(thread, "/chat:verbose off")
	r.command(thread, "/model:set fast")
	release()
	var s said
	select {
	case s = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the turn never ended")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if got := strings.Join(activities(s.x), " "); got != "true true false false" {
		t.Fatalf("calls streamed with %s; want the first round's as the agent says, the next as the command", got)
	}
	reqs := r.requests(thread)
	if len(reqs) != 3 || reqs[0].Model != "offline" || reqs[1].Model != "anthropic/claude-test" {
		t.Fatalf("%d requests", len(reqs))
	}
	if ev := r.events(thread); waiting(ev) || count(ev, isKind(store.KindMessage)) != 1 {
		t.Fatalf("events %+v", ev)
	}
}

// Each session lists the owner's commands, named as ACP names them.
func TestCommandsListed(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(r.t.Context(), 10*time.Second)
	defer cancel()
	x := r.dial(ctx, "telegram:68")
	defer x.c.Close()
	var got []string
	eventually(t, "the session's available_commands_update", func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		if len(x.commands) == 0 {
			return false
		}
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				AvailableCommands []acp.Command `json:"availableCommands"`
			} `json:"update"`
		}
		if err := json.Unmarshal(x.commands[0], &n); err != nil || n.SessionID != "telegram:68" {
			t.Fatalf("%s: %v", x.commands[0], err)
		}
		for _, c := range n.Update.AvailableCommands {
			if c.Description == "" || c.Input == nil || c.Input.Hint == "" {
				t.Fatalf("command %+v", c)
			}
			got = append(got, c.Name)
		}
		return true
	})
	if strings.Join(got, " ") != "model:set chat:verbose" {
		t.Fatalf("listed %v", got)
	}
}

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
