package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
)

// chatActions are the chat namespace's actions as the tests use them.
var chatActions = []Action{
	{Namespace: "chat", Name: "create", Aliases: []string{"new"}, Names: []string{"clear", "new", "reset"}, Description: "Start anew"},
	{Namespace: "chat", Name: "compact", Names: []string{"compact"}, Description: "Compact"},
}

// TestCommandRenamed: the owner's /new and /chat:create reach the harness
// as the first of the action's names its session lists (/clear), whether
// the list came before session/new answered, after it, or again after a
// load; a command it offers, or one no action has, goes as it came; anyone
// else's /new is quoted text.
func TestCommandRenamed(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"listed before session/new answers", []string{envCaps + "=load"}},
		{"listed after", []string{envCaps + "=load", envLateList + "=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.env, func(cfg *Config) { cfg.Actions = chatActions })
			ctx := testCtx(t, 30*time.Second)
			for _, m := range []struct{ sent, want string }{
				{"/new", "echo: /clear"},
				{"/chat:create", "echo: /clear"},
				{"/new now please", "echo: /clear now please"},
				{"/compact", "echo: /compact"},
				{"/clear", "echo: /clear"},
				{"/unknown:thing x", "echo: /unknown:thing x"},
			} {
				if got := r.message(ctx, "telegram:1", m.sent, nil).must(t); got != m.want {
					t.Errorf("%s reached the harness as %q, want %q", m.sent, got, m.want)
				}
			}
			meta := json.RawMessage(`{"link":{"from":"person:telegram:7"}}`)
			if got := r.message(ctx, "telegram:1", "/new", meta).must(t); !strings.Contains(got, "> /new") {
				t.Errorf("another sender's /new reached the harness as %q, want it quoted", got)
			}
			r.restart() // the session is loaded: its list comes again
			if got := r.message(ctx, "telegram:1", "/new", nil).must(t); got != "echo: /clear" {
				t.Errorf("after a load /new reached the harness as %q", got)
			}
		})
	}
}

// TestCommandWaitsForList: a known command fails before it is forwarded
// when the session lists no commands within the call timeout; a normal
// message and an unknown command never wait.
func TestCommandWaitsForList(t *testing.T) {
	r := newRig(t, []string{envNoLists + "=1"}, func(cfg *Config) {
		cfg.Actions = chatActions
		cfg.CallTimeout = 300 * time.Millisecond
	})
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "hello", nil).must(t)
	if got := r.message(ctx, "telegram:1", "/unknown", nil).must(t); got != "echo: /unknown" {
		t.Errorf("an unknown command reached the harness as %q", got)
	}
	before := len(r.agentLog("prompt "))
	e := r.message(ctx, "telegram:1", "/new", nil)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || !strings.Contains(rpcErr.Message, "listed no commands") {
		t.Fatalf("/new with no list was answered %v", e.err)
	}
	if n := len(r.agentLog("prompt ")); n != before {
		t.Errorf("the harness was sent the command it could not be named to")
	}
}

// TestOwnedAction: a Link-owned action runs through its route, its answer
// returned through ACP, never reaching the harness; it is added to the
// commands listed to the bridge; anyone else's is text for the harness.
func TestOwnedAction(t *testing.T) {
	actions := append([]Action{{Namespace: "task", Name: "list", Description: "List the tasks", Route: "task__list"}}, chatActions...)
	r := newRig(t, nil, func(cfg *Config) {
		cfg.Actions = actions
		cfg.Route = func(ctx context.Context, route, thread, args string) (string, error) {
			return "ran " + route + " for " + thread + " with " + args, nil
		}
	})
	ctx := testCtx(t, 30*time.Second)
	e := r.message(ctx, "telegram:1", "/task:list open ones", nil)
	if got, want := e.must(t), "ran task__list for telegram:1 with open ones"; got != want {
		t.Errorf("answered %q, want %q", got, want)
	}
	if n := len(r.agentLog("prompt ")); n != 0 {
		t.Errorf("the harness saw the owned action")
	}
	meta := json.RawMessage(`{"link":{"from":"person:telegram:7"}}`)
	if got := r.message(ctx, "telegram:1", "/task:list", meta).must(t); !strings.Contains(got, "> /task:list") {
		t.Errorf("another sender's /task:list was answered %q, want it sent to the harness as text", got)
	}
	// The next connection is told the session's list with the action added.
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	got := s.prompt(ctx, "hi", nil)
	got.must(t)
	var names []string
	for _, n := range got.notes {
		var p struct {
			Update struct {
				Kind     string `json:"sessionUpdate"`
				Commands []struct {
					Name string `json:"name"`
				} `json:"availableCommands"`
			} `json:"update"`
		}
		json.Unmarshal(n.params, &p)
		if p.Update.Kind == acp.UpdateAvailableCommands {
			for _, c := range p.Update.Commands {
				names = append(names, c.Name)
			}
		}
	}
	if strings.Join(names, " ") != "clear compact task:list" {
		t.Errorf("the bridge was listed %q, want the harness's and task:list", names)
	}
}

// TestNewSessionLetsGo: an action that begins a new session (the chat's
// /new, new_session) goes to the harness by the name it offers (/clear)
// and then lets the thread's session go, in the file too: the next
// message begins a new session, the one taken up after a restart, which
// holds nothing from before the /new (Claude Code goes on after /clear in
// a session its old id doesn't name). An action without it keeps the
// session.
func TestNewSessionLetsGo(t *testing.T) {
	actions := append([]Action(nil), chatActions...)
	actions[0].NewSession = true
	r := newRig(t, []string{envCaps + "=resume,load"}, func(cfg *Config) { cfg.Actions = actions })
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	first := r.hub.sessions.get("telegram:1")
	if got := r.message(ctx, "telegram:1", "/compact", nil).must(t); got != "echo: /compact" || r.hub.sessions.get("telegram:1") != first {
		t.Fatalf("/compact answered %q, the thread's session %q after it, want %q kept", got, r.hub.sessions.get("telegram:1"), first)
	}
	if got := r.message(ctx, "telegram:1", "/new", nil).must(t); got != "echo: /clear" {
		t.Fatalf("/new reached the harness as %q", got)
	}
	if s := r.hub.sessions.get("telegram:1"); s != "" {
		t.Fatalf("after /new the thread still keeps %q", s)
	}
	r.message(ctx, "telegram:1", "two", nil).must(t)
	if s := r.hub.sessions.get("telegram:1"); s == "" || s == first {
		t.Fatalf("after /new the next message's session is %q, want a new one (was %q)", s, first)
	}
	r.restart()
	if got := r.message(ctx, "telegram:1", "history", nil).must(t); got != `history: "two"` {
		t.Errorf("after a restart the thread took up %q, want the session begun after /new", got)
	}
}
