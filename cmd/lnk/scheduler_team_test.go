package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/tools/scheduler"
	toolsend "github.com/lnk-dev/link/tools/send"
)

// chatEvents are the events of agent's thread under home.
func chatEvents(t *testing.T, home, agent, thread string) []store.Event {
	t.Helper()
	p, err := store.For(home, agent)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := log.Open(p.Chats()).Read(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// waitEvents waits for cond over agent's thread's events.
func waitEvents(t *testing.T, home, agent, thread, what string, cond func([]store.Event) bool) []store.Event {
	t.Helper()
	var evs []store.Event
	if err := testwait.Err(30*time.Second, what, func() bool {
		evs = chatEvents(t, home, agent, thread)
		return cond(evs)
	}); err != nil {
		t.Fatalf("%v: %+v", err, evs)
	}
	return evs
}

// Two agents of one owner exchange a message and a reply through lnk
// agent chat: main, run by the chat, messages work, another agent under
// the same home, which lnk starts here for it; work reads it from
// agent:main in its link:agent-main, and its reply comes back into
// main's link:chat from agent:work, which main answers; that answer,
// nobody waiting for it, is shown by the chat before the next message.
func TestChatTeammates(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "scheduler__message_teammate", Input: `{"agent":"work","text":"is the report done?"}`}}})
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "agents", "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	in, typed := io.Pipe()
	defer typed.Close()
	var out, errb safeBuffer
	exit := make(chan int, 1)
	go func() { exit <- runChat(ctx, nil, env, in, false, nil, &out, &errb) }()

	io.WriteString(typed, "ask work whether the report is done\n")
	asked := waitEvents(t, home, "work", "link:agent-main", "work to read main's message", func(evs []store.Event) bool {
		return len(evs) > 0
	})
	if asked[0].From != "agent:main" || asked[0].Text != "is the report done?" || asked[0].Hops != 1 {
		t.Fatalf("work read %+v", asked[0])
	}
	waitEvents(t, home, "main", "link:chat", "work's reply", func(evs []store.Event) bool {
		for _, e := range evs {
			if e.From == "agent:work" {
				return true
			}
		}
		return false
	})
	replies := 0
	for _, e := range chatEvents(t, home, "main", "link:chat") {
		if e.From == "agent:work" {
			replies++
			if e.Hops != 2 || !strings.Contains(e.Text, "is the report done?") {
				t.Fatalf("the reply %+v", e)
			}
		}
	}
	if replies != 1 {
		t.Fatalf("%d replies", replies)
	}
	// main's answer to it, nobody waiting, is kept for the chat.
	url, key := localEndpoint(t, errb.String(), home, "main")
	var res contract.RecoverResult
	var err error
	if werr := testwait.Err(30*time.Second, "main's answer kept", func() bool {
		res, err = toolsend.Recover(ctx, toolsend.Target{URL: url, Key: key}, contract.RecoverParams{TwoPhase: true})
		return err == nil && len(res.Answers) == 1 && res.Answers[0].Thread == "link:chat"
	}); werr != nil {
		t.Fatalf("%v: %+v, %v", werr, res, err)
	}
	io.WriteString(typed, "thanks\n")
	waitOut(t, &out, "[An answer kept for link:chat while nobody waited:]")
	io.WriteString(typed, "/quit\n")
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the chat didn't end")
	}
	if !strings.Contains(out.String(), "agent:work wrote, 2 hops away") {
		t.Fatalf("the chat showed %q", out.String())
	}
	if !strings.Contains(errb.String(), "lnk: started agent work here, messaged by a teammate") {
		t.Fatalf("didn't say work started: %s", errb.String())
	}
}

// localEndpoint is the endpoint lnk agent chat said it started agent's
// harness at, on its status, and the agent's key under home.
func localEndpoint(t *testing.T, status, home, agent string) (string, []byte) {
	t.Helper()
	_, rest, ok := strings.Cut(status, "lnk: started agent "+agent+" here (home "+home+", endpoint ")
	url, _, _ := strings.Cut(rest, ")")
	if !ok || url == "" {
		t.Fatalf("no endpoint said: %s", status)
	}
	key, err := contract.ReadKeyFile(filepath.Join(home, "agents", agent, "endpoint.key"))
	if err != nil {
		t.Fatal(err)
	}
	return url, key
}

// An agent's teammates in an agents file are its other lines, each at its
// port with its key file's key and its id, read again at each call; a
// line on port 0 and an agent the file doesn't name are no one's
// teammates.
func TestAgentsFileMates(t *testing.T) {
	dir := t.TempDir()
	write := func(lines ...string) string {
		path := filepath.Join(dir, "agents")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, n := range []string{"main", "work", "free"} {
		if err := os.WriteFile(filepath.Join(dir, n+".key"), []byte(n+"-key-0123456789abcdef\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	line := func(name, id string, port int) string {
		return fmt.Sprintf(`{"name": %q, "id": %q, "home": %q, "port": %d, "key_file": %q}`, name, id, dir, port, filepath.Join(dir, name+".key"))
	}
	path := write(line("main", "id-main", 18801), line("work", "id-work", 18802), line("free", "id-free", 0))
	mates := agentsFileMates(path)
	ctx := context.Background()
	if names, err := mates.Names(ctx); err != nil || strings.Join(names, ",") != "main,work" {
		t.Fatalf("names %v, %v", names, err)
	}
	ep, err := mates.Teammate(ctx, "work")
	if err != nil || ep.URL != "http://127.0.0.1:18802/acp" || string(ep.Key) != "work-key-0123456789abcdef" || ep.Agent != "work" || ep.AgentID != "id-work" {
		t.Fatalf("work is %+v, %v", ep, err)
	}
	for _, name := range []string{"free", "stranger"} {
		if _, err := mates.Teammate(ctx, name); !errors.Is(err, scheduler.ErrNoTeammate) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// work leaves the file: it is no one's teammate from the next call.
	write(line("main", "id-main", 18801))
	if _, err := mates.Teammate(ctx, "work"); !errors.Is(err, scheduler.ErrNoTeammate) {
		t.Fatalf("work after it left: %v", err)
	}
}
