package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// turns is a real Link Harness over these tools: its conversations in
// files at home, its model a scripted queue.
type turns struct {
	h    *harness.Harness
	q    *scripted.Scripted
	home string

	mu   sync.Mutex
	reqs []model.Request
}

func newTurns(tb testing.TB, home string, tools harness.Tools) *turns {
	tb.Helper()
	r := &turns{q: scripted.New(), home: home}
	h, err := harness.New(turnsConfig(home, tools, r.q, func(agent, thread string, req model.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reqs = append(r.reqs, req)
	}))
	if err != nil {
		tb.Fatal(err)
	}
	r.h = h
	tb.Cleanup(func() {
		// Bounded: a turn still under way (a test that failed mid-turn)
		// is cancelled after a while rather than waited for, and so is
		// its call, which a test server's blocked call would hold.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(ctx)
	})
	return r
}

// turnsConfig is the rig's harness config over tools and a scripted
// model, its lease a second long.
func turnsConfig(home string, tools harness.Tools, q *scripted.Scripted, onCall func(agent, thread string, req model.Request)) harness.Config {
	cfg := harnesstest.Config(home, q, harness.Settings{Model: "test-model"})
	cfg.Tools, cfg.OnCall, cfg.LeaseTTL = tools, onCall, time.Second
	return cfg
}

// ask sends text in thread and waits for the turn's end.
func (r *turns) ask(tb testing.TB, thread, text string) *stream {
	tb.Helper()
	s := &stream{}
	if _, err := r.h.Prompt(testCtx(tb), acp.Prompt{Agent: agent, Thread: thread, Blocks: []acp.Block{{Type: "text", Text: text}}}, s); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (r *turns) requests() []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Request(nil), r.reqs...)
}

// events are thread's events as kept.
func events(tb testing.TB, home, thread string) []store.Event {
	tb.Helper()
	p, err := store.For(home, agent)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := log.Open(p.Chats()).Read(context.Background(), thread, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// stream is what a turn streams, as the bridge sees it.
type stream struct {
	mu    sync.Mutex
	text  strings.Builder
	calls []string // "call <id> <title>" and "done <id> <status>"
}

func (s *stream) Taken(context.Context) error { return nil }

func (s *stream) Chunk(_ context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.WriteString(text)
	return nil
}

func (s *stream) ToolCall(_ context.Context, id, title string, _ *bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "call "+id+" "+title)
	return nil
}

func (s *stream) ToolCallUpdate(_ context.Context, id, status string, _ *bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "done "+id+" "+status)
	return nil
}

// A turn calling tools through MCP: a round's calls run at once, each
// streamed as tool_call titled with its name and its end; each answer an
// event of its own, a 1 MiB one kept to 32 KiB; the tools' _meta says the
// conversation.
func TestTurnCallsTools(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"block", "search"}})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"big", "block"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	home := t.TempDir()
	r := newTurns(t, home, newTools(t, home, e))
	r.q.Push(
		model.Response{Calls: []model.ToolCall{{ID: "a", Name: "memory__block"}, {ID: "b", Name: "web__block"}}},
		model.Response{Calls: []model.ToolCall{{ID: "c", Name: "web__big"}, {ID: "d", Name: "nothing__here"}}},
		model.Response{Text: "done"},
	)
	// Both blocking calls must reach their servers before either is let
	// go: the round's calls run at once.
	together := make(chan bool, 1)
	go func() {
		// Let go after a while anyway, so calls made one after another
		// fail the test rather than hang it.
		give := time.After(30 * time.Second)
		both := false
		select {
		case <-mem.started:
			select {
			case <-web.started:
				both = true
			case <-give:
			}
		case <-give:
		}
		together <- both
		mem.releaseBlocked()
		web.releaseBlocked()
	}()
	s := r.ask(t, "telegram:1", "go")
	if !<-together {
		t.Fatal("the round's blocking calls didn't both reach their tools: not made at once")
	}
	if got := s.text.String(); got != "done" {
		t.Fatalf("answer %q", got)
	}
	s.mu.Lock()
	streamed := strings.Join(s.calls, "\n")
	s.mu.Unlock()
	for _, want := range []string{"call a memory__block", "call b web__block", "done a completed", "done b completed", "call c web__big", "done c completed", "call d nothing__here", "done d failed"} {
		if !strings.Contains(streamed, want) {
			t.Errorf("streamed:\n%s\nwant %q", streamed, want)
		}
	}
	results := map[string]store.Event{}
	for _, ev := range events(t, home, "telegram:1") {
		if ev.Kind == store.KindToolResult {
			if _, ok := results[ev.CallID]; ok {
				t.Fatalf("call %s answered twice", ev.CallID)
			}
			results[ev.CallID] = ev
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d tool results kept, want 4", len(results))
	}
	if big := results["c"]; len(big.Text) > harness.MaxToolAnswer || !strings.Contains(big.Text, "32 KiB") {
		t.Fatalf("1 MiB answer kept as %d bytes", len(big.Text))
	}
	if d := results["d"]; !d.IsError || !strings.Contains(d.Text, "There is no tool nothing__here") {
		t.Fatalf("a call to no tool: %+v", d)
	}
	mem.mu.Lock()
	thread := mem.metas[0][MetaThread]
	mem.mu.Unlock()
	if thread != "telegram:1" {
		t.Fatalf("memory's call said thread %v", thread)
	}
	// web's session was the turn's, ended with it; memory's is kept.
	if _, d, _ := web.counts(); d != 2 {
		t.Fatalf("web: %d sessions ended, want 2 (the listing's and the turn's)", d)
	}
	if _, d, _ := mem.counts(); d != 0 {
		t.Fatalf("memory's kept session ended: %d", d)
	}
}

// The prompt's tools are byte-identical across a restart with one tool
// down, through tool-lists.json.
func TestTurnRestartOneDown(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search", "read"}, instructions: "m"})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"search", "fetch"}, reverse: true})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	home := t.TempDir()
	first := newTools(t, home, e)
	r1 := newTurns(t, home, first)
	r1.q.Push(model.Response{Text: "one"})
	r1.ask(t, "telegram:1", "hi")
	r1.h.Close()
	first.Close()
	web.close()

	second := newTools(t, home, e, func(c *Config) { c.StartTimeout = 2 * time.Second })
	r2 := newTurns(t, home, second)
	r2.q.Push(model.Response{Text: "two"})
	r2.ask(t, "telegram:2", "hi")
	a, _ := json.Marshal(r1.requests()[0].Tools)
	b, _ := json.Marshal(r2.requests()[0].Tools)
	if string(a) != string(b) || !strings.Contains(string(a), "web__fetch") {
		t.Fatalf("tools across a restart with web down:\n%s\nwant\n%s", b, a)
	}
}

// A conversation narrowed to no tool after calling one: its calls and
// answers go to the model as text, and nothing is offered.
func TestTurnToolsGone(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url()}}
	home := t.TempDir()
	r := newTurns(t, home, newTools(t, home, e))
	r.q.Push(model.Response{Calls: []model.ToolCall{{ID: "a", Name: "memory__search", Input: `{"q":"x"}`}}}, model.Response{Text: "found"}, model.Response{Text: "again"})
	r.ask(t, "telegram:5", "search")
	none := []string{}
	s := &stream{}
	if _, err := r.h.Prompt(testCtx(t), acp.Prompt{Agent: agent, Thread: "telegram:5", Tools: &none, Blocks: []acp.Block{{Type: "text", Text: "no tools now"}}}, s); err != nil {
		t.Fatal(err)
	}
	reqs := r.requests()
	last := reqs[len(reqs)-1]
	if len(last.Tools) != 0 {
		t.Fatalf("offered %v after narrowing to none", names(last.Tools))
	}
	said := scripted.RequestText(last)
	if !strings.Contains(said, `[Called memory__search with {"q":"x"}]`) || !strings.Contains(said, `memory says search {"q":"x"}`) {
		t.Fatalf("the model was told:\n%s", said)
	}
	for _, m := range last.Messages {
		for _, p := range m.Parts {
			if p.Kind == model.KindToolUse || p.Kind == model.KindToolResult {
				t.Fatalf("a %s part with no tools offered", p.Kind)
			}
		}
	}
}
