package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// Two agents of one owner exchange a message and a reply, served by one
// Link Harness process (serve --agents), each with a scheduler of its
// own: main's model asks work whether the report is done; work reads it
// in its conversation with main (link:agent-main), from agent:main, 1
// hop away; its answer comes back into main's link:chat once, from
// agent:work, 2 hops away, and main's answer to it is kept for the owner.
func TestTeammatesExchange(t *testing.T) {
	fake := fakeprovider.New()
	t.Cleanup(fake.Close)
	a := startTwoAgents(t, map[string]*fakeprovider.Server{"main": fake, "work": fake})
	home, list, teams, servers := a.home, a.list, a.teams, a.servers
	// Each lists the other as its teammate, never itself.
	if text, _ := call(t, connectTo(t, servers["main"]), callListTeammates, NoIn{}, nil); text != "Your teammates: work." {
		t.Fatalf("list_teammates: %q", text)
	}
	in, _ := json.Marshal(MessageTeammateIn{Agent: "work", Text: "is the report done?"})
	fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "scheduler__" + callMessageTeammate, Input: string(in)}}})
	mainEP, err := list.Teammate(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	say(t, mainEP, "link:chat", "ask work whether the report is done", nil)

	testwait.For(t, 30*time.Second, "work's reply in main's link:chat", func() bool {
		return len(messagesFrom(agentEvents(t, home, "main", "link:chat"), "agent:")) > 0 && stored(t, teams["main"]) == 0
	})
	asked := messagesFrom(agentEvents(t, home, "work", "link:agent-main"), "agent:")
	if len(asked) != 1 || asked[0].From != "agent:main" || asked[0].Text != "is the report done?" || asked[0].Hops != 1 {
		t.Fatalf("work read %+v", asked)
	}
	replies := messagesFrom(agentEvents(t, home, "main", "link:chat"), "agent:")
	if len(replies) != 1 || replies[0].From != "agent:work" || !strings.Contains(replies[0].Text, "is the report done?") || replies[0].Hops != 2 {
		t.Fatalf("main got %+v", replies)
	}
	// work's conversation with main was its alone: main's home has none.
	if evs := agentEvents(t, home, "main", "link:agent-main"); len(evs) != 0 {
		t.Fatalf("main's home holds %d events of link:agent-main", len(evs))
	}
	testwait.For(t, 20*time.Second, "main's answer to the reply kept for the owner", func() bool {
		all, _ := Sent{}.Kept(context.Background(), mainEP, "link:chat")
		for _, k := range all {
			if strings.Contains(k.Text, "agent:work wrote, 2 hops away") {
				return true
			}
		}
		return false
	})
}

// twoAgents are main and work, two agents of one owner served by one
// Link Harness process (serve --agents), each with a team of its own
// served here as its $LNK_SCHEDULER.
type twoAgents struct {
	home    string
	list    AgentList
	teams   map[string]*Team
	servers map[string]string // each team's MCP address
}

// startTwoAgents starts them, each agent's model its fake.
func startTwoAgents(t *testing.T, fakes map[string]*fakeprovider.Server) twoAgents {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the real harness")
	}
	bin := buildHarness(t)
	home, dir := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	urls := map[string]string{}
	list := AgentList(func(context.Context) ([]Agent, error) {
		mu.Lock()
		defer mu.Unlock()
		var out []Agent
		for _, name := range []string{"main", "work"} {
			out = append(out, Agent{Name: name, URL: urls[name], KeyFile: filepath.Join(dir, name+".key")})
		}
		return out, nil
	})
	a := twoAgents{home: home, list: list, teams: map[string]*Team{}, servers: map[string]string{}}
	var file strings.Builder
	for _, name := range []string{"main", "work"} {
		if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(name+"-key-0123456789abcdef\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		team, err := NewTeam(TeamConfig{
			Agent:     name,
			Dir:       filepath.Join(home, "agents", name, "scheduler"),
			Self:      func(ctx context.Context) (Endpoint, error) { return list.Teammate(ctx, name) },
			Teammates: list,
			Sender:    Sent{},
			Settings:  func(context.Context) (TeamSettings, error) { return TeamSettings{MaxTasks: 2}, nil },
			Retry:     50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := team.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { team.Close() })
		a.teams[name], a.servers[name] = team, serveTeam(t, team)
		env := map[string]string{"LNK_SCHEDULER": a.servers[name], "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fakes[name].URL()}
		line, _ := json.Marshal(map[string]any{"name": name, "home": home, "port": 0, "key_file": filepath.Join(dir, name+".key"), "env": env})
		file.Write(append(line, '\n'))
	}
	agentsFile := filepath.Join(dir, "agents")
	if err := os.WriteFile(agentsFile, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range startProc(t, bin, nil, 2, "serve", "--agents", agentsFile, "--model", "anthropic/claude-test") {
		mu.Lock()
		urls[p.agent] = p.url
		mu.Unlock()
	}
	return a
}

// A loop between two agents is stopped by the hops the contract carries:
// main's model asks work at every turn, work answers, and each answer
// brought back is a message two hops further; main's asks go out 1, 3,
// 5 and 7 hops away, and its call answering the reply 8 hops away is
// refused naming the rule, so the loop ends there, nothing left to send.
func TestTeammatesLoopStopsAtHops(t *testing.T) {
	mainFake, workFake := fakeprovider.New(), fakeprovider.New()
	t.Cleanup(mainFake.Close)
	t.Cleanup(workFake.Close)
	ask := fakeprovider.ToolCall{Name: "scheduler__" + callMessageTeammate, Input: `{"agent":"work","text":"and now?"}`}
	for range 5 {
		mainFake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{ask}}, fakeprovider.Turn{Text: "asked"})
	}
	// work answers each after a pause, so its answer comes back once
	// main's turn that asked has ended.
	for range 4 {
		workFake.Script(fakeprovider.Turn{Text: "not yet", Delay: 50 * time.Millisecond})
	}
	a := startTwoAgents(t, map[string]*fakeprovider.Server{"main": mainFake, "work": workFake})
	mainEP, err := a.list.Teammate(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	say(t, mainEP, "link:chat", "keep asking work", nil)

	var refusal string
	testwait.For(t, 60*time.Second, "main's fifth call refused", func() bool {
		for _, e := range agentEvents(t, a.home, "main", "link:chat") {
			if e.Kind == store.KindToolResult && strings.Contains(e.Text, "Refused: ") {
				refusal = e.Text
				return stored(t, a.teams["main"]) == 0
			}
		}
		return false
	})
	if !strings.Contains(refusal, "this conversation's message is 8 hops away, and a message the scheduler sends is fewer than 8") {
		t.Fatalf("refused with %q", refusal)
	}
	var asked, replies []int
	for _, e := range messagesFrom(agentEvents(t, a.home, "work", "link:agent-main"), "agent:main") {
		asked = append(asked, e.Hops)
	}
	for _, e := range messagesFrom(agentEvents(t, a.home, "main", "link:chat"), "agent:work") {
		replies = append(replies, e.Hops)
	}
	if fmt.Sprint(asked) != "[1 3 5 7]" || fmt.Sprint(replies) != "[2 4 6 8]" {
		t.Fatalf("work was asked at hops %v, main got replies at %v", asked, replies)
	}
}
