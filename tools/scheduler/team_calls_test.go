package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/tools/mcpserve/mcptest"
)

// teamServer serves t's calls over Streamable HTTP on 127.0.0.1, as the
// scheduler does, and is a client's session with it.
func teamServer(tb testing.TB, t *Team) *mcp.ClientSession {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "link-scheduler-test", Version: "1"}, &mcp.ServerOptions{Instructions: TeamInstructions})
	AddTeamTools(s, t)
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(h.Close)
	return mcptest.Connect(tb, h.URL)
}

// call makes one call with meta, answering its text and whether it was
// refused.
func call(tb testing.TB, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) (string, bool) {
	tb.Helper()
	return mcptest.Call(tb, cs, name, args, meta)
}

// unsent is a Sender for calls that must send nothing: each of its
// methods fails the test.
type unsent struct{ tb testing.TB }

func (u unsent) Ask(context.Context, Endpoint, Message) (string, error) {
	u.tb.Error("a message was sent")
	return "", errors.New("unsent")
}
func (u unsent) Tell(context.Context, Endpoint, Message) error {
	u.tb.Error("a message was told")
	return errors.New("unsent")
}
func (u unsent) Kept(context.Context, Endpoint, string) ([]Kept, error) { return nil, nil }
func (u unsent) Done(context.Context, Endpoint, []string) error         { return nil }

// homeTeammates are the agents named, each at no endpoint: the calls
// refused before sending never reach one.
type homeTeammates []string

func (h homeTeammates) Teammate(_ context.Context, name string) (Endpoint, error) {
	for _, n := range h {
		if n == name {
			return Endpoint{Agent: n}, nil
		}
	}
	return Endpoint{}, fmt.Errorf("agent %s: %w", name, ErrNoTeammate)
}
func (h homeTeammates) Names(context.Context) ([]string, error) { return h, nil }

// newTestTeam is a team of agent main under a new folder, its sender s.
func newTestTeam(tb testing.TB, s Sender, maxTasks int) *Team {
	tb.Helper()
	t, err := NewTeam(TeamConfig{
		Agent:     "main",
		Dir:       filepath.Join(tb.TempDir(), "scheduler"),
		Self:      func(context.Context) (Endpoint, error) { return Endpoint{Agent: "main"}, nil },
		Teammates: homeTeammates{"main", "work"},
		Sender:    s,
		Settings:  func(context.Context) (TeamSettings, error) { return TeamSettings{MaxTasks: maxTasks}, nil },
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := t.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.Close() })
	return t
}

// Bad input to start_task and message_teammate is refused naming the
// rule it broke, and nothing is stored or sent: a task asking for a tool
// its parent hasn't, a thread name the contract refuses, a model that
// isn't one, hops past the limit, no conversation said, a teammate that
// isn't one (or is the agent itself).
func TestTeamRefusals(t *testing.T) {
	team := newTestTeam(t, unsent{t}, 2)
	cs := teamServer(t, team)
	parent := mcp.Meta{metaThread: "link:chat", metaHops: 0, metaTools: []string{"memory__search", "memory__read", "scheduler__start_task"}, metaModel: "offline"}
	with := func(key string, v any) mcp.Meta {
		m := mcp.Meta{}
		for k, x := range parent {
			m[k] = x
		}
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
		return m
	}
	for _, c := range []struct {
		name string
		call string
		args any
		meta mcp.Meta
		want string
	}{
		{"a tool the parent hasn't", callStartTask, StartTaskIn{Text: "list my files", Tools: []string{"run__command"}}, parent, "no tool run__command (it has memory__search, memory__read, scheduler__start_task)"},
		{"a whole tool the parent hasn't", callStartTask, StartTaskIn{Text: "x", Tools: []string{"run"}}, parent, "no tool run "},
		{"a tool's name that isn't one", callStartTask, StartTaskIn{Text: "x", Tools: []string{"memory search"}}, parent, "a tool's name is 1 to 128"},
		{"a thread the contract refuses", callStartTask, StartTaskIn{Text: "x", Name: "Big Name"}, parent, "link:task-Big Name: thread: a link thread is link:<name>"},
		{"a model that isn't one", callStartTask, StartTaskIn{Text: "x", Model: "a model"}, parent, "model: a model is 1 to 128"},
		{"no text", callStartTask, StartTaskIn{Text: "  "}, parent, "text is the message"},
		{"hops past the limit", callStartTask, StartTaskIn{Text: "x"}, with(metaHops, MaxHops-1), "hops away, and a message the scheduler sends is fewer than 8"},
		{"no conversation said", callStartTask, StartTaskIn{Text: "x"}, with(metaThread, nil), "the call's _meta names no conversation (link.local/thread)"},
		{"a conversation the contract refuses", callStartTask, StartTaskIn{Text: "x"}, with(metaThread, "link:../x"), "link.local/thread: thread:"},
		{"no tools said", callStartTask, StartTaskIn{Text: "x"}, with(metaTools, nil), "a task gets its parent's tools or fewer, and this call doesn't say"},
		{"hops that aren't a number", callStartTask, StartTaskIn{Text: "x"}, with(metaHops, "2"), "link.local/hops is a count"},
		{"not a teammate", callMessageTeammate, MessageTeammateIn{Agent: "stranger", Text: "hi"}, parent, "agent stranger: no such agent of the owner's on this machine"},
		{"itself", callMessageTeammate, MessageTeammateIn{Agent: "main", Text: "hi"}, parent, "main is you"},
		{"a name that isn't an agent's", callMessageTeammate, MessageTeammateIn{Agent: "Work!", Text: "hi"}, parent, "an agent's name is lowercase"},
		{"a teammate's hops past the limit", callMessageTeammate, MessageTeammateIn{Agent: "work", Text: "hi"}, with(metaHops, 7), "hops away"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, failed := call(t, cs, c.call, c.args, c.meta)
			if !failed || !strings.HasPrefix(text, "Refused: ") || !strings.Contains(text, c.want) {
				t.Fatalf("answered %q (failed %v), want a refusal saying %q", text, failed, c.want)
			}
		})
	}
	if n := stored(t, team); n != 0 {
		t.Fatalf("%d jobs stored after refusals", n)
	}
}

// stored is how many jobs not done the team's folder holds (a task's
// record, kept after its end, is not one).
func stored(tb testing.TB, t *Team) int {
	tb.Helper()
	entries, err := os.ReadDir(t.jobs.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a job's file being written, renamed into place or gone next
		}
		b, err := os.ReadFile(filepath.Join(t.jobs.dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing: the job ended
		}
		if err != nil {
			tb.Fatal(err)
		}
		if j, err := parseJob(b); err != nil || j.Stage != stageDone {
			n++
		}
	}
	return n
}

// A task asking for fewer of its parent's tools gets those alone, a
// tool's name standing for its calls the parent has; none asked for is
// all the parent's.
func TestTaskTools(t *testing.T) {
	parent := &[]string{"memory__search", "memory__read", "run__command"}
	for _, c := range []struct {
		want []string
		got  string
	}{
		{nil, "memory__search,memory__read,run__command"},
		{[]string{"memory"}, "memory__search,memory__read"},
		{[]string{"memory__read", "memory"}, "memory__read,memory__search"},
		{[]string{}, ""},
	} {
		got, err := taskTools(parent, c.want)
		if err != nil {
			t.Fatalf("%v: %v", c.want, err)
		}
		if strings.Join(*got, ",") != c.got {
			t.Errorf("%v: got %v, want %s", c.want, *got, c.got)
		}
	}
	if _, err := taskTools(&[]string{"memory__search"}, []string{"memory__search", "run__command"}); err == nil || !strings.Contains(err.Error(), "no tool run__command") {
		t.Fatalf("a wider list: %v", err)
	}
}

// The initialize answer's words on subagents and teammates name each of
// the team's calls and leave the scheduler room for its reminders within
// the 2 KB the prompt keeps of one tool's text.
func TestTeamInstructions(t *testing.T) {
	cs := teamServer(t, newTestTeam(t, unsent{t}, 1))
	got := cs.InitializeResult().Instructions
	if got != TeamInstructions || len(got) > 1024 {
		t.Fatalf("instructions of %d bytes: %q", len(got), got)
	}
	for _, c := range []string{callStartTask, callListTasks, callMessageTeammate, callListTeammates, "task:<id>", "agent:<name>"} {
		if !strings.Contains(got, c) {
			t.Errorf("the instructions don't say %s", c)
		}
	}
}

// config.json's scheduler.max_tasks is read with the scheduler's other
// settings: 1 to MaxMaxTasks, DefaultMaxTasks when unsaid, a count out
// of bounds refused naming it.
func TestMaxTasksSetting(t *testing.T) {
	for _, c := range []struct {
		file string
		want int
		err  string
	}{
		{``, DefaultMaxTasks, ""},
		{`{"scheduler": {"zone": "UTC"}}`, DefaultMaxTasks, ""},
		{`{"scheduler": {"max_tasks": 3}}`, 3, ""},
		{`{"scheduler": {"max_tasks": 0}}`, 0, `config.json's "scheduler": max_tasks is 1 to 64`},
		{`{"scheduler": {"max_tasks": 65}}`, 0, "max_tasks is 1 to 64"},
		{`{"scheduler": {"max_tasks": "3"}}`, 0, "max_tasks"},
	} {
		s, err := ParseSettings([]byte(c.file))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.file, err, c.err)
			}
			continue
		}
		if err != nil || s.MaxTasks != c.want {
			t.Errorf("%s: %d, %v", c.file, s.MaxTasks, err)
		}
	}
}

// An agent whose name is too long for its conversation with a teammate
// (link:agent-<name>, a link thread's name 64 characters at most) is
// refused naming the thread rule, nothing stored.
func TestTeammateThreadTooLong(t *testing.T) {
	long := strings.Repeat("a", 59)
	team, err := NewTeam(TeamConfig{
		Agent:     long,
		Dir:       filepath.Join(t.TempDir(), "scheduler"),
		Self:      func(context.Context) (Endpoint, error) { return Endpoint{}, nil },
		Teammates: homeTeammates{long, "work"},
		Sender:    unsent{t},
		Settings:  func(context.Context) (TeamSettings, error) { return TeamSettings{MaxTasks: 1}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer team.Close()
	text, failed := call(t, teamServer(t, team), callMessageTeammate, MessageTeammateIn{Agent: "work", Text: "hi"}, mcp.Meta{metaThread: "link:chat"})
	if !failed || !strings.Contains(text, "Refused: a teammate reads your messages in link:agent-<your name>, and link:agent-"+long+": thread: a link thread is link:<name>, 1 to 64") {
		t.Fatalf("answered %q", text)
	}
	if n := stored(t, team); n != 0 {
		t.Fatalf("%d stored", n)
	}
}
