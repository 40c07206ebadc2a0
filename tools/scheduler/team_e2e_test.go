package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// say sends text to thread at the agent's endpoint as the owner does
// through Link's bridge, with _meta meta (nil for none), and returns the
// streamed answer.
func say(tb testing.TB, to Endpoint, thread, text string, meta json.RawMessage) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: to.URL, Key: to.Key, Agent: to.Agent})
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var got strings.Builder
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if method != acp.MethodSessionUpdate || json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || u.Content == nil || u.SessionUpdate != acp.UpdateMessageChunk {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got.WriteString(u.Content.Text)
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := c.Resume(ctx, thread); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, meta); err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got.String()
}

// startCall is a scripted call of start_task.
func startCall(in StartTaskIn) fakeprovider.ToolCall {
	b, _ := json.Marshal(in)
	return fakeprovider.ToolCall{Name: "scheduler__" + callStartTask, Input: string(b)}
}

// A parent starts three tasks in one turn and is answered with their
// three results: each task runs in a conversation of its own, told as
// from task:<id>, and its answer comes back into link:chat once as a
// message from task:<id>, which the parent's model then reads. The
// model is the fake provider: the parent's first answer is scripted,
// every other is its echo of the message it answers.
func TestParentAnsweredWithThreeResults(t *testing.T) {
	r := newHarnessRig(t, 3)
	asks := []string{"find the red fox", "find the blue bird", "find the green frog"}
	var calls []fakeprovider.ToolCall
	for _, a := range asks {
		calls = append(calls, startCall(StartTaskIn{Text: a}))
	}
	r.fake.Script(fakeprovider.Turn{ToolCalls: calls})
	self, _ := r.self.get(context.Background())
	say(t, self, "link:chat", "look into these three things", nil)

	var results []store.Event
	testwait.For(t, 30*time.Second, "three results in link:chat", func() bool {
		results = messagesFrom(events(t, r.home, "link:chat"), "task:")
		return len(results) >= 3 && stored(t, r.team) == 0
	})
	if len(results) != 3 {
		t.Fatalf("%d results came back: %+v", len(results), results)
	}
	from := map[string]bool{}
	for _, a := range asks {
		n := 0
		for _, e := range results {
			if strings.Contains(e.Text, a) {
				n++
				from[e.From] = true
				// The task's own conversation had its message once, from it.
				id := strings.TrimPrefix(e.From, "task:")
				if asked := messagesFrom(events(t, r.home, "link:task-"+id), "task:"); len(asked) != 1 || asked[0].Text != a {
					t.Errorf("link:task-%s has %+v", id, asked)
				}
			}
		}
		if n != 1 {
			t.Errorf("%q came back %d times", a, n)
		}
	}
	if len(from) != 3 {
		t.Fatalf("the results came from %v", from)
	}
	// The parent's model was given all three.
	testwait.For(t, 20*time.Second, "the parent's model reading the three results", func() bool {
		for _, req := range r.fake.Requests() {
			body := string(req.Body)
			if strings.Contains(body, "look into these three things") && strings.Contains(body, asks[0]) && strings.Contains(body, asks[1]) && strings.Contains(body, asks[2]) && strings.Contains(body, "task:") {
				return true
			}
		}
		return false
	})
}

// A task asking for run when its parent was narrowed to memory is
// refused, through the real harness: the parent's conversation, narrowed
// by a message's tools to memory's search and the scheduler, has its
// call of start_task with tools run__command answered with the refusal
// and nothing started; the same parent asking for memory starts a task
// whose model is offered memory__search alone, on the parent's model,
// and one naming another model runs on that one.
func TestTaskNarrowedThroughHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real harness")
	}
	r := newHarnessRigWith(t, 4, map[string]string{
		"LNK_MEMORY": toolServer(t, "search", "read"),
		"LNK_RUN":    toolServer(t, "command"),
	})
	r.fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
		startCall(StartTaskIn{Text: "list the files", Tools: []string{"run__command"}}),
		startCall(StartTaskIn{Text: "search my notes", Tools: []string{"memory"}}),
		startCall(StartTaskIn{Text: "count my words", Model: "anthropic/claude-other"}),
	}})
	self, _ := r.self.get(context.Background())
	narrow, _ := json.Marshal(map[string]any{"link": map[string]any{"from": "task:parent", "tools": []string{"memory__search", "scheduler__start_task"}}})
	say(t, self, "link:chat", "look into my files", narrow)

	// The round's results are written as each call ends, in any order:
	// the refusal is the one answering the call that asked for run.
	results := map[string]store.Event{}
	var runCall string
	for _, e := range events(t, r.home, "link:chat") {
		if e.Kind == store.KindToolResult {
			results[e.CallID] = e
		}
		for _, c := range e.Calls {
			if strings.Contains(c.Input, "list the files") {
				runCall = c.ID
			}
		}
	}
	if len(results) != 3 || runCall == "" {
		t.Fatalf("%d tool results: %+v; the call asking for run: %q", len(results), results, runCall)
	}
	refusal := fmt.Sprint(results[runCall])
	if !strings.Contains(refusal, "Refused: a task gets its parent's tools or fewer, and this conversation has no tool run__command (it has memory__search, scheduler__start_task)") {
		t.Fatalf("start_task with run answered %s", refusal)
	}
	testwait.For(t, 30*time.Second, "the memory task answered", func() bool {
		// The parent's own message is from task:parent, the answer's from the task.
		return len(messagesFrom(events(t, r.home, "link:chat"), "task:")) == 3 && stored(t, r.team) == 0
	})
	var offered []string
	models := map[string]string{}
	for _, req := range r.fake.Requests() {
		for _, task := range []string{"search my notes", "count my words"} {
			if _, seen := models[task]; !seen && strings.Contains(req.LastUserText, task) && strings.Contains(req.LastUserText, "1 hop away") {
				models[task] = req.Model
			}
		}
		// The task's own request: its message, 1 hop away (the parent's
		// later one reads the task's answer, 2 hops away).
		if offered == nil && strings.Contains(req.LastUserText, "search my notes") && strings.Contains(req.LastUserText, "1 hop away") {
			offered = req.Tools
		}
		if strings.Contains(string(req.Body), "list the files") && strings.Contains(req.LastUserText, "list the files") {
			t.Fatalf("the refused task reached the model: %s", req.LastUserText)
		}
	}
	if !slices.Equal(offered, []string{"memory__search"}) {
		t.Fatalf("the memory task was offered %v", offered)
	}
	// A task runs on its parent's model unless it names one.
	if models["search my notes"] != "claude-test" || models["count my words"] != "claude-other" {
		t.Fatalf("the tasks ran on %v", models)
	}
}

// toolServer serves an MCP server over Streamable HTTP on 127.0.0.1
// whose calls each answer their name: a tool of the agent's for a test
// of what a conversation is offered.
func toolServer(tb testing.TB, calls ...string) string {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "tool", Version: "1"}, nil)
	for _, c := range calls {
		mcp.AddTool(s, &mcp.Tool{Name: c, Description: "answers " + c}, func(context.Context, *mcp.CallToolRequest, NoIn) (*mcp.CallToolResult, any, error) {
			return told("%s", c)
		})
	}
	return serveMCP(tb, s)
}

// A task's later answers reach its parent too: a task starts a subtask of
// its own and answers at once; the subtask's answer comes back into the
// task's conversation, the task answers it, and that answer is carried
// up to link:chat as a second message from the task, once, nothing left
// kept in the task's conversation. The model is the fake provider's
// echo but for the task's first answer, which starts the subtask.
func TestTaskLaterAnswerCarriedUp(t *testing.T) {
	r := newHarnessRig(t, 4)
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	r.fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{startCall(StartTaskIn{Text: "dig into the red fox"})}})
	text, failed := call(t, cs, callStartTask, StartTaskIn{Text: "research foxes"}, mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}})
	if failed {
		t.Fatal(text)
	}
	id := taskID(t, text)
	var results []store.Event
	testwait.For(t, 30*time.Second, "two answers of the task in link:chat", func() bool {
		results = messagesFrom(events(t, r.home, "link:chat"), "task:")
		return len(results) >= 2 && stored(t, r.team) == 0
	})
	if len(results) != 2 || results[0].From != "task:"+id || results[1].From != "task:"+id {
		t.Fatalf("link:chat got %+v", results)
	}
	if !strings.Contains(results[0].Text, "research foxes") || !strings.Contains(results[1].Text, "dig into the red fox") || results[1].Hops != 4 {
		t.Fatalf("the task's answers: %q, then %q (%d hops)", results[0].Text, results[1].Text, results[1].Hops)
	}
	// The subtask's answer went into the task's conversation once, and
	// the task's answer to it was taken there, not left kept.
	inTask := messagesFrom(events(t, r.home, "link:task-"+id), "task:")
	if len(inTask) != 2 || inTask[1].Hops != 3 || !strings.Contains(inTask[1].Text, "dig into the red fox") {
		t.Fatalf("link:task-%s has %+v", id, inTask)
	}
	self, _ := r.self.get(context.Background())
	if left, err := (Sent{}).Kept(context.Background(), self, "link:task-"+id); err != nil || len(left) != 0 {
		t.Fatalf("left kept in the task's conversation: %+v, %v", left, err)
	}
}
