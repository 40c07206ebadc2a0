package scheduler

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// harnessRig is the real harness as a process over a home, its model the
// fake provider, its scheduler a team served here.
type harnessRig struct {
	bin, home, keyFile string
	key                []byte
	fake               *fakeprovider.Server
	self               *selfAt
	team               *Team
	env                map[string]string
	proc               *harnessProc
}

// newHarnessRig builds the harness and starts it with a team of its own.
func newHarnessRig(t testing.TB, maxTasks int) *harnessRig {
	t.Helper()
	return newHarnessRigWith(t, maxTasks, nil)
}

// newHarnessRigWith is newHarnessRig with env's tools too.
func newHarnessRigWith(t testing.TB, maxTasks int, env map[string]string) *harnessRig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the real harness")
	}
	r := &harnessRig{bin: buildHarness(t), home: t.TempDir(), key: []byte("team-test-key-0123456789"), fake: fakeprovider.New(), self: &selfAt{}}
	t.Cleanup(r.fake.Close)
	r.keyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(r.keyFile, r.key, 0o600); err != nil {
		t.Fatal(err)
	}
	r.team = r.newTeam(t, maxTasks)
	r.env = map[string]string{
		"ANTHROPIC_API_KEY":  "k",
		"ANTHROPIC_BASE_URL": r.fake.URL(),
		"LNK_SCHEDULER":      serveTeam(t, r.team),
		"LNK_LEASE_TTL":      "2s",
	}
	for k, v := range env {
		r.env[k] = v
	}
	r.start(t)
	return r
}

// newTeam is the main agent's team over the rig's home, started.
func (r *harnessRig) newTeam(t testing.TB, maxTasks int) *Team {
	t.Helper()
	team, err := NewTeam(TeamConfig{
		Agent:    contract.DefaultAgent,
		Dir:      filepath.Join(r.home, "agents", contract.DefaultAgent, "scheduler"),
		Self:     r.self.get,
		Sender:   Sent{},
		Settings: func(context.Context) (TeamSettings, error) { return TeamSettings{MaxTasks: maxTasks}, nil },
		Retry:    50 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := team.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { team.Close() })
	return team
}

// start starts the harness (again), the team's own endpoint moved to it.
func (r *harnessRig) start(t testing.TB) {
	t.Helper()
	r.proc = startHarness(t, r.bin, r.home, r.keyFile, r.env)
	r.self.set(r.proc.url, r.key)
}

// SIGKILL the harness while a task runs: its result still reaches the
// parent's conversation once. (Meanwhile a task over the limit is
// refused, and list_tasks lists the one running.) The task's turn is cut mid-answer; the
// harness started again finishes it and keeps its answer, which the
// scheduler takes from _link/recover (its message answered already
// received when sent again) and brings back to link:chat as a message
// from task:<id>, exactly once; the parent's answer to it is kept for
// the owner. The task's own message was stored once.
func TestTaskResultAcrossHarnessKill(t *testing.T) {
	r := newHarnessRig(t, 1)
	r.fake.Script(fakeprovider.Turn{Hang: true}, fakeprovider.Turn{Text: "There are 42 stars."})
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	text, failed := call(t, cs, callStartTask, StartTaskIn{Text: "count the stars"}, mcp.Meta{metaThread: "link:chat", metaHops: 0, metaTools: []string{"scheduler__start_task"}})
	if failed {
		t.Fatal(text)
	}
	id := taskID(t, text)
	testwait.For(t, 20*time.Second, "the task's turn to reach the model", func() bool { return len(r.fake.Requests()) == 1 })
	// Over the agent's limit of tasks at once (1 here), another is
	// refused, and nothing more is stored.
	text, failed = call(t, cs, callStartTask, StartTaskIn{Text: "count the moons"}, mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}})
	if !failed || !strings.Contains(text, "Refused: the agent runs at most 1 tasks at once (config.json's scheduler.max_tasks), and 1 are running") {
		t.Fatalf("a task over the limit: %q", text)
	}
	if n := stored(t, r.team); n != 1 {
		t.Fatalf("%d jobs stored", n)
	}
	// list_tasks lists it in its conversation alone.
	if text, _ := call(t, cs, callListTasks, NoIn{}, mcp.Meta{metaThread: "link:chat"}); !strings.HasPrefix(text, "task:"+id+" (running, since ") || !strings.HasSuffix(text, "): count the stars\n") {
		t.Fatalf("list_tasks in link:chat: %q", text)
	}
	if text, _ := call(t, cs, callListTasks, NoIn{}, mcp.Meta{metaThread: "link:other"}); text != "Nothing of this conversation's is waiting for an answer." {
		t.Fatalf("list_tasks in link:other: %q", text)
	}
	r.proc.kill()
	r.start(t)

	testwait.For(t, 60*time.Second, "the task done", func() bool { return stored(t, r.team) == 0 })
	var kept []Kept
	testwait.For(t, 20*time.Second, "the parent's answer kept for the owner", func() bool {
		var err error
		kept, err = Sent{}.Kept(context.Background(), Endpoint{URL: r.proc.url, Key: r.key}, "link:chat")
		return err == nil && len(kept) > 0
	})
	results := messagesFrom(events(t, r.home, "link:chat"), "task:")
	if len(results) != 1 || results[0].From != "task:"+id || results[0].Text != "There are 42 stars." || results[0].Hops != 2 {
		t.Fatalf("the parent got %+v, want the task's answer once", results)
	}
	if asked := messagesFrom(events(t, r.home, "link:task-"+id), "task:"); len(asked) != 1 || asked[0].Text != "count the stars" || asked[0].Hops != 1 {
		t.Fatalf("the task's conversation has %+v, want its message once", asked)
	}
	if len(kept) != 1 || !strings.Contains(kept[0].Text, "There are 42 stars.") {
		t.Fatalf("kept for the owner: %+v", kept)
	}
	// A scheduler started again over the same folder has nothing left to
	// bring back.
	r.team.Close()
	again := r.newTeam(t, 4)
	if n := len(again.snapshot()); n != 0 {
		t.Fatalf("%d jobs read again after the task was done", n)
	}
}

// connectTo is a client's session with the MCP server at url.
func connectTo(tb testing.TB, url string) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// taskID is the id start_task's answer names.
func taskID(tb testing.TB, answer string) string {
	tb.Helper()
	_, rest, ok := strings.Cut(answer, "Started task:")
	if !ok || len(rest) < 16 {
		tb.Fatalf("start_task answered %q", answer)
	}
	return rest[:16]
}
