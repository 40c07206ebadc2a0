package scheduler

import (
	"encoding/json"
	"fmt"
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

// The scheduler stopped while a task's turn runs and started again over
// the same folder carries the task on: its message, sent again, is
// answered already received (stored once), its answer is taken from
// those the harness kept (its caller gone), and it reaches the parent
// once.
func TestTaskAcrossSchedulerRestart(t *testing.T) {
	r := newHarnessRig(t, 2)
	r.fake.Script(fakeprovider.Turn{Text: "The moon is far away, about 384,400 km.", Delay: 100 * time.Millisecond})
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	text, failed := call(t, cs, callStartTask, StartTaskIn{Text: "how far is the moon"}, mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}})
	if failed {
		t.Fatal(text)
	}
	id := taskID(t, text)
	testwait.For(t, 20*time.Second, "the task's turn to reach the model", func() bool { return len(r.fake.Requests()) == 1 })
	r.team.Close()
	if n := stored(t, r.team); n != 1 {
		t.Fatalf("%d jobs kept across the stop", n)
	}
	// Kept for its owner alone: the folder 0700, the file 0600.
	if info, err := os.Stat(r.team.jobs.dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the jobs folder: %v, %v", info.Mode(), err)
	}
	if info, err := os.Stat(r.team.jobs.jobFile(id)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the job's file: %v, %v", info.Mode(), err)
	}
	again := r.newTeam(t, 2)
	testwait.For(t, 30*time.Second, "the task done", func() bool {
		return stored(t, again) == 0 && len(messagesFrom(events(t, r.home, "link:chat"), "task:")) > 0
	})
	results := messagesFrom(events(t, r.home, "link:chat"), "task:")
	if len(results) != 1 || results[0].From != "task:"+id || !strings.HasPrefix(results[0].Text, "The moon is far away") {
		t.Fatalf("the parent got %+v", results)
	}
	if asked := messagesFrom(events(t, r.home, "link:task-"+id), "task:"); len(asked) != 1 {
		t.Fatalf("the task's message was stored %d times", len(asked))
	}
}

// A job's file that doesn't read (not JSON, a rule broken, another's id,
// a folder) is set aside as <name>.bad and said in the log; the others
// are carried on.
func TestJobFilesCorrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	if err := os.MkdirAll(filepath.Join(dir, "0000000000000004.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	good := job{ID: "0000000000000003", Kind: kindTask, Parent: "link:chat", Thread: "link:task-0000000000000003", Text: "x", Since: time.Now().UTC(), Stage: stageAnswered, Answer: "done"}
	other := good
	other.ID = "0000000000000009"
	for name, b := range map[string][]byte{
		"0000000000000001.json": []byte("{not json"),
		"0000000000000002.json": []byte(`{"id":"0000000000000002","kind":"task","parent":"link:chat","thread":"link:task-x","text":"x","since":"2026-01-01T00:00:00Z","stage":"running"}`),
		"0000000000000003.json": must(json.Marshal(good)),
		"0000000000000005.json": must(json.Marshal(other)),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	all, bad, err := jobs{dir: dir}.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].ID != good.ID {
		t.Fatalf("read %+v", all)
	}
	want := map[string]string{"0000000000000001": "not a job's JSON object", "0000000000000002": "stage is asking, kept, answered, upkept or done", "0000000000000004": "", "0000000000000005": "its id isn't its file's name"}
	if len(bad) != len(want) {
		t.Fatalf("set aside %v", bad)
	}
	for _, e := range bad {
		found := false
		for id, rule := range want {
			if strings.Contains(e.Error(), id) && strings.Contains(e.Error(), rule) {
				found = true
			}
		}
		if !found {
			t.Errorf("unexpected: %v", e)
		}
	}
	for id := range want {
		if _, err := os.Stat(filepath.Join(dir, id+".json.bad")); err != nil {
			t.Errorf("%s not set aside: %v", id, err)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzParseJob: a job's file as read from disk. One read is one whose
// every rule holds, and it is read the same once written again.
func FuzzParseJob(f *testing.F) {
	good := job{ID: "00000000000000a3", Kind: kindAgent, Parent: "telegram:42", Hops: 2, Thread: "link:agent-main", Teammate: "work", Text: "is it done?", Since: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), Stage: stageAsking}
	f.Add(must(json.Marshal(good)))
	tools := []string{"memory__search"}
	task := job{ID: "00000000000000a4", Kind: kindTask, Parent: "link:chat", Thread: "link:task-00000000000000a4", Text: "x", Tools: &tools, Model: "fast", Since: good.Since, Stage: stageAnswered, Answer: "y", Failed: true}
	f.Add(must(json.Marshal(task)))
	f.Add([]byte(`{"id":"00000000000000a4"}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := parseJob(b)
		if err != nil {
			return
		}
		if err := j.check(); err != nil {
			t.Fatalf("read a job breaking a rule: %v", err)
		}
		again, err := parseJob(must(json.Marshal(j)))
		if err != nil || again.ID != j.ID || again.Text != j.Text || again.Stage != j.Stage || again.Parent != j.Parent {
			t.Fatalf("written again it reads %+v, %v", again, err)
		}
	})
}

// FuzzCallMeta: a call's _meta as the MCP SDK decodes it. One read has a
// conversation the contract allows, hops in bounds, and tools and a
// model that are names.
func FuzzCallMeta(f *testing.F) {
	f.Add([]byte(`{"link.local/thread":"link:chat","link.local/hops":2,"link.local/tools":["memory__search"],"link.local/model":"anthropic/claude-test"}`))
	f.Add([]byte(`{"link.local/thread":"telegram:42"}`))
	f.Add([]byte(`{"link.local/thread":"link:chat","link.local/hops":1.5}`))
	f.Add([]byte(`{"link.local/thread":"link:chat","link.local/tools":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return
		}
		c, err := parseCallMeta(m)
		if err != nil {
			if !strings.Contains(err.Error(), "link.local/") {
				t.Fatalf("a refusal naming no key: %v", err)
			}
			return
		}
		if c.Hops < 0 || c.Thread == "" {
			t.Fatalf("read %+v", c)
		}
		if c.Tools != nil {
			if _, err := taskTools(c.Tools, nil); err != nil {
				t.Fatalf("tools read %v: %v", *c.Tools, err)
			}
		}
		if c.Model != "" && contract.CheckModel(c.Model) != nil {
			t.Fatalf("read model %q", c.Model)
		}
	})
}

// A task whose turn fails (its model refuses the request) comes back to
// its parent once, saying why in the harness's words.
func TestTaskTurnFails(t *testing.T) {
	r := newHarnessRig(t, 2)
	r.fake.Script(fakeprovider.Turn{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"no such model"}}`})
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	text, failed := call(t, cs, callStartTask, StartTaskIn{Text: "sum the column"}, mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}})
	if failed {
		t.Fatal(text)
	}
	id := taskID(t, text)
	testwait.For(t, 30*time.Second, "the failure told", func() bool {
		return stored(t, r.team) == 0 && len(messagesFrom(events(t, r.home, "link:chat"), "task:")) > 0
	})
	results := messagesFrom(events(t, r.home, "link:chat"), "task:")
	if len(results) != 1 || results[0].From != "task:"+id || !strings.HasPrefix(results[0].Text, "[The model couldn't answer") {
		t.Fatalf("the parent got %+v", results)
	}
}

// A task found stored before a crash whose answer never comes to be kept
// (its turn never finished) is told to its parent once, as no answer,
// KeptFor after, rather than looked for again for good.
func TestTaskKeptNeverAnswered(t *testing.T) {
	r := newHarnessRig(t, 2)
	r.team.Close()
	j := &job{ID: "00000000000000e1", Kind: kindTask, Parent: "link:chat", Thread: "link:task-00000000000000e1", Text: "lost", Since: time.Now().Add(-2 * time.Hour).UTC(), Stage: stageKept, KeptSince: time.Now().Add(-time.Hour).UTC()}
	if err := r.team.jobs.save(j); err != nil {
		t.Fatal(err)
	}
	again := r.newTeam(t, 2)
	testwait.For(t, 20*time.Second, "the lost task told", func() bool {
		return stored(t, again) == 0 && len(messagesFrom(events(t, r.home, "link:chat"), "task:")) > 0
	})
	results := messagesFrom(events(t, r.home, "link:chat"), "task:")
	if len(results) != 1 || !strings.HasPrefix(results[0].Text, "No answer: its turn was cut short (a crash) and hadn't finished 30m0s later.") {
		t.Fatalf("the parent got %+v", results)
	}
}

// Many start_task calls at once never pass the agent's limit together:
// 16 calls against max_tasks 3, the model holding every task's turn,
// start 3 tasks and refuse 13, naming the limit; 3 job files are kept.
func TestTaskLimitAtOnce(t *testing.T) {
	r := newHarnessRig(t, 3)
	for range 3 {
		r.fake.Script(fakeprovider.Turn{Hang: true})
	}
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	meta := mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}}
	type answer struct {
		text   string
		failed bool
	}
	answers := make(chan answer, 16)
	for i := range 16 {
		go func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: callStartTask, Arguments: StartTaskIn{Text: fmt.Sprintf("task %d", i)}, Meta: meta})
			if err != nil {
				answers <- answer{err.Error(), true}
				return
			}
			answers <- answer{res.Content[0].(*mcp.TextContent).Text, res.IsError}
		}()
	}
	started, refused := 0, 0
	for range 16 {
		a := <-answers
		switch {
		case !a.failed && strings.HasPrefix(a.text, "Started task:"):
			started++
		case a.failed && strings.HasPrefix(a.text, "Refused: the agent runs at most 3 tasks at once"):
			refused++
		default:
			t.Fatalf("answered %q", a.text)
		}
	}
	if started != 3 || refused != 13 || stored(t, r.team) != 3 {
		t.Fatalf("%d started, %d refused, %d stored", started, refused, stored(t, r.team))
	}
}

// A task answering more than a message holds (2 MiB) comes back cut to
// MaxReplyText at a character's start, saying it was cut, once.
func TestTaskAnswerCut(t *testing.T) {
	r := newHarnessRig(t, 2)
	long := strings.Repeat("é", 1<<20) // 2 MiB
	r.fake.Script(fakeprovider.Turn{Text: long})
	cs := connectTo(t, r.env["LNK_SCHEDULER"])
	if text, failed := call(t, cs, callStartTask, StartTaskIn{Text: "write a lot"}, mcp.Meta{metaThread: "link:chat", metaTools: []string{"scheduler__start_task"}}); failed {
		t.Fatal(text)
	}
	testwait.For(t, 60*time.Second, "the cut answer back", func() bool {
		return stored(t, r.team) == 0 && len(messagesFrom(events(t, r.home, "link:chat"), "task:")) > 0
	})
	results := messagesFrom(events(t, r.home, "link:chat"), "task:")
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	text := results[0].Text
	body, note, ok := strings.Cut(text, "\n[The answer was cut here")
	if !ok || len(body) > MaxReplyText || len(body) < MaxReplyText-1 || strings.Trim(body, "é") != "" || !strings.HasSuffix(note, "brings back.]") {
		t.Fatalf("came back %d bytes, ending %q", len(text), text[max(0, len(text)-120):])
	}
}
