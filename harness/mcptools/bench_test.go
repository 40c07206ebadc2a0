package mcptools

import (
	"strconv"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
)

// benchTurns is a harness over memory (kept) and web (a turn's own),
// after the process's first turn has listed them.
func benchTurns(b *testing.B) (*turns, *Tools, *mcpServer, *mcpServer) {
	b.Helper()
	mem := newMCPServer(b, "memory", serverOpts{calls: []string{"list", "read", "search"}, instructions: "memory"})
	web := newMCPServer(b, "web", serverOpts{calls: []string{"fetch"}})
	home := b.TempDir()
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	tl, err := New(Config{Env: e.get, ToolLists: toolListsAt(home)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tl.Close() })
	r := newTurns(b, home, tl)
	r.q.Push(model.Response{Text: "first"})
	r.ask(b, "telegram:0", "the first turn lists the tools")
	return r, tl, mem, web
}

// A turn whose model calls no tool: it starts no session.
func BenchmarkTurnNoTool(b *testing.B) {
	r, _, mem, web := benchTurns(b)
	ms, _, _ := mem.counts()
	ws, _, _ := web.counts()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.q.Push(model.Response{Text: "hello"})
		r.ask(b, "telegram:"+strconv.Itoa(i+1), "hi")
	}
	b.StopTimer()
	if s, _, _ := mem.counts(); s != ms {
		b.Fatalf("memory: %d sessions started by turns calling no tool", s-ms)
	}
	if s, _, _ := web.counts(); s != ws {
		b.Fatalf("web: %d sessions started by turns calling no tool", s-ws)
	}
}

// A turn whose model calls memory__search once, on memory's kept
// session.
func BenchmarkTurnMemoryWarm(b *testing.B) {
	r, _, mem, _ := benchTurns(b)
	ms, _, _ := mem.counts()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.q.Push(model.Response{Calls: []model.ToolCall{{Name: "memory__search", Input: `{"q":"x"}`}}}, model.Response{Text: "found"})
		r.ask(b, "telegram:"+strconv.Itoa(i+1), "search")
	}
	b.StopTimer()
	if s, _, c := mem.counts(); s != ms || c != b.N {
		b.Fatalf("memory: %d sessions started, %d calls; want 0, %d", s-ms, c, b.N)
	}
}

// The same turn with memory's session ended before each: every call
// starts a session and lists memory's calls first.
func BenchmarkTurnMemoryCold(b *testing.B) {
	r, tl, mem, _ := benchTurns(b)
	ms, _, _ := mem.counts()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tl.endKeptSessions(agent)
		b.StartTimer()
		r.q.Push(model.Response{Calls: []model.ToolCall{{Name: "memory__search", Input: `{"q":"x"}`}}}, model.Response{Text: "found"})
		r.ask(b, "telegram:"+strconv.Itoa(i+1), "search")
	}
	b.StopTimer()
	if s, _, _ := mem.counts(); s != ms+b.N {
		b.Fatalf("memory: %d sessions started, want %d", s-ms, b.N)
	}
}

// endKeptSessions ends agent's kept sessions, as its limits would.
func (t *Tools) endKeptSessions(agent string) {
	a := t.agent(agent)
	var closing []*session
	a.mu.Lock()
	for _, s := range a.kept {
		if a.retire(s) {
			closing = append(closing, s)
		}
	}
	a.mu.Unlock()
	closeAll(closing)
}

// One call of memory__search alone, on its kept session.
func BenchmarkCallMemoryWarm(b *testing.B) {
	_, tl, _, _ := benchTurns(b)
	benchCall(b, tl, false)
}

// One call of memory__search alone, starting its session first.
func BenchmarkCallMemoryCold(b *testing.B) {
	_, tl, _, _ := benchTurns(b)
	benchCall(b, tl, true)
}

func benchCall(b *testing.B, tl *Tools, cold bool) {
	ctx := b.Context()
	call := model.ToolCall{ID: "c", Name: "memory__search", Input: `{"q":"x"}`}
	meta := contract.CallMeta{Thread: "telegram:1"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			tl.endKeptSessions(agent)
			b.StartTimer()
		}
		if text, failed := tl.Call(ctx, agent, call, meta); failed {
			b.Fatal(text)
		}
	}
}
