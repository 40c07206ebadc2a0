package harness_test

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
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
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
	r.T.Helper()
	calls := len(r.Requests(thread))
	res, x, err := r.Say(thread, text, nil)
	if err != nil {
		r.T.Fatalf("%s: %v", text, err)
	}
	if res.StopReason != acp.StopEndTurn || res.Steered() {
		r.T.Fatalf("%s answered %+v", text, res)
	}
	chunks := 0
	for _, n := range x.Notes() {
		if n.Update.SessionUpdate == acp.UpdateMessageChunk {
			chunks++
		}
	}
	if chunks != 1 || x.Text() == "" {
		r.T.Fatalf("%s: %d chunks, %q; want one confirmation", text, chunks, x.Text())
	}
	if n := len(r.Requests(thread)); n != calls {
		r.T.Fatalf("%s reached the model", text)
	}
	return x.Text()
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
	r.Model.Push(search("c1"), model.Response{Text: "found"})
	_, x, err := r.Say(thread, "look it up", nil)
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
	r.SetSettings(func(s *harness.Settings) { s.Verbose = &on })
	r.Model.Push(search("c2"), model.Response{Text: "found"})
	if _, x, err = r.Say(thread, "again", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "false false" {
		t.Fatalf("after off, calls streamed with %s", got)
	}
	r.command(thread, "/chat:verbose") // off, switched: on
	var sets []bool
	for _, e := range r.Events(thread) {
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
	r.SetSettings(func(s *harness.Settings) { s.Verbose = &off })
	r.Model.Push(search("c3"), model.Response{Text: "found"})
	if _, x, err = r.Say("telegram:61", "look", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "false false" {
		t.Fatalf("the agent's off: calls streamed with %s", got)
	}
	r.SetSettings(func(s *harness.Settings) { s.Verbose = nil })
	r.Model.Push(search("c4"), model.Response{Text: "found"})
	if _, x, err = r.Say("telegram:61", "look", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(activities(x), " "); got != "none none" {
		t.Fatalf("no choice anywhere: calls streamed with %s", got)
	}
	// Bare with nothing chosen switches calls on.
	r.command("telegram:62", "/chat:verbose")
	if ev := r.Events("telegram:62"); len(ev) != 1 || ev[0].Kind != store.KindChatSet || !*ev[0].Verbose {
		t.Fatalf("events %+v", ev)
	}
}

// A command is the owner's: a text from anyone else that looks like one is
// a message, and reaches the model as its text. A text that names no
// command of the harness's is a message too, the owner's included.
func TestCommandFromOthers(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:63"
	r.Model.Push(model.Response{Text: "heard"}, model.Response{Text: "heard"}, model.Response{Text: "heard"})
	if _, _, err := r.Say(thread, "/chat:verbose on", json.RawMessage(`{"link":{"from":"person:telegram:7","fromName":"Grace"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Say(thread, "/model:set nope/x", json.RawMessage(`{"link":{"from":"agent:helper"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Say(thread, "/chat:new", nil); err != nil {
		t.Fatal(err)
	}
	reqs := r.Requests(thread)
	if len(reqs) != 3 || !strings.Contains(reqs[0].LastUserText(), "/chat:verbose on") || !strings.Contains(reqs[1].LastUserText(), "/model:set nope/x") || !strings.HasSuffix(reqs[2].LastUserText(), "\n/chat:new") {
		for _, q := range reqs {
			t.Logf("asked with %q", q.LastUserText())
		}
		t.Fatalf("the model was asked %d times", len(reqs))
	}
	ev := r.Events(thread)
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
	if n := len(r.Events(thread)); n != 0 {
		t.Fatalf("a bare /model:set stored %d events", n)
	}
	if got := r.command(thread, "/model:set fast"); !strings.Contains(got, "fast (anthropic/claude-test)") {
		t.Fatalf("confirmed %q", got)
	}
	r.Model.Push(model.Response{Text: "on claude"})
	if _, _, err := r.Say(thread, "hello", nil); err != nil {
		t.Fatal(err)
	}
	if reqs := r.Requests(thread); len(reqs) != 1 || reqs[0].Model != "anthropic/claude-test" {
		t.Fatalf("the next turn's request: %+v", reqs)
	}
	ev := r.Events(thread)
	if ev[0].Kind != store.KindModelSet || ev[0].Model != "anthropic/claude-test" || ev[0].Provider == "" || ev[0].From != "" {
		t.Fatalf("model_set %+v", ev[0])
	}
	if got := r.command(thread, "/model:set"); got != "This conversation runs on anthropic/claude-test." {
		t.Fatalf("bare after: %q", got)
	}
	r.command(thread, "/model:set openai/gpt-test")
	r.Model.Push(model.Response{Text: "on gpt"})
	if _, _, err := r.Say(thread, "and now?", nil); err != nil {
		t.Fatal(err)
	}
	if reqs := r.Requests(thread); reqs[len(reqs)-1].Model != "openai/gpt-test" {
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
		_, _, err := r.Say(thread, c.text, nil)
		var rpc *acp.Error
		if !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams || !strings.HasPrefix(rpc.Message, c.field+": ") {
			t.Errorf("%q: %v; want invalid params naming %s", c.text, err, c.field)
		}
	}
	if ev := r.Events(thread); len(ev) != 0 {
		t.Fatalf("refused commands stored %+v", ev)
	}
	if n := len(r.Requests(thread)); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
}

// A command is no message waiting for an answer: the next turn answers
// its own message once, and a sweep finds nothing to finish.
func TestCommandNotWaiting(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:66"
	r.Model.Push(model.Response{Text: "one"})
	if _, _, err := r.Say(thread, "first", nil); err != nil {
		t.Fatal(err)
	}
	r.command(thread, "/chat:verbose off")
	r.command(thread, "/model:set fast")
	if ev := r.Events(thread); harness.Waiting(ev) {
		t.Fatalf("a message waits after commands: %+v", ev)
	}
	if err := r.Harness.Sweep(r.T.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	r.Model.Push(model.Response{Text: "two"})
	_, x, err := r.Say(thread, "second", nil)
	if err != nil || x.Text() != "two" {
		t.Fatalf("second: %q, %v", x.Text(), err)
	}
	if n := len(r.Requests(thread)); n != 2 {
		t.Fatalf("the model was asked %d times, want once a message", n)
	}
	if r.Model.Left() != 0 {
		t.Fatal("an answer left unasked")
	}
	// The copy for people shows the messages and answers, not the commands.
	dir, _ := r.FolderFiles().Paths.Conversation(thread)
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
	r.SetSettings(func(s *harness.Settings) { s.Verbose = &on })
	r.Model.Push(search("c1"), search("c2"), model.Response{Text: "done"})
	reached, release := r.HoldNext()
	type said struct {
		x   *exchange
		err error
	}
	done := make(chan said, 1)
	go func() {
		_, x, err := r.Say(thread, "look twice", nil)
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
	reqs := r.Requests(thread)
	if len(reqs) != 3 || reqs[0].Model != "offline" || reqs[1].Model != "anthropic/claude-test" {
		t.Fatalf("%d requests", len(reqs))
	}
	if ev := r.Events(thread); harness.Waiting(ev) || count(ev, isKind(store.KindMessage)) != 1 {
		t.Fatalf("events %+v", ev)
	}
}

// Each session lists the owner's commands, named as ACP names them.
func TestCommandsListed(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(r.T.Context(), 10*time.Second)
	defer cancel()
	x := r.Dial(ctx, "telegram:68")
	defer x.Client.Close()
	var got []string
	testwait.For(t, 10*time.Second, "the session's available_commands_update", func() bool {
		commands := x.Commands()
		if len(commands) == 0 {
			return false
		}
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				AvailableCommands []acp.Command `json:"availableCommands"`
			} `json:"update"`
		}
		if err := json.Unmarshal(commands[0], &n); err != nil || n.SessionID != "telegram:68" {
			t.Fatalf("%s: %v", commands[0], err)
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
