package mcptools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
)

const agent = "main"

func names(tools []model.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestServers(t *testing.T) {
	got := servers(map[string]string{
		"LNK_MEMORY":             "http://m",
		"LNK_SCHEDULER":          " http://s ",
		"LNK_RUN":                "http://r",
		"LNK_FILE":               "http://f",
		"LNK_CODE":               "http://c",
		"LNK_TOOL_WEB":           "http://w",
		"LNK_TOOL_ACME_MEMORY":   "http://am",
		"LNK_TOOL_MEMORY":        "http://other", // Link's own wins
		"LNK_TOOL_":              "http://empty",
		"LNK_TOOL_BAD__NAME":     "http://b",
		"LNK_TOOL_NOADDR":        "",
		"LNK_TOOL_DOT.NAME":      "http://d",
		"LNK_TOOL_Web":           "http://lower", // WEB sorts first and wins
		"LNK_TOOL__LEADING":      "http://l",
		"PATH":                   "/usr/bin",
		"LNK_MEMORY_SOMETHING":   "http://x",
		"LNK_TOOL_" + long(65):   "http://long",
		"LNK_TOOL_" + long(64):   "http://fits",
		"LNK_TOOL_TRAILING_":     "http://t",
		"LNK_TOOL_DIGITS_2":      "http://d2",
		"LNK_TOOL_UNICODÉ":       "http://u",
		"LNK_TOOL_ACME_MEMORY_2": "http://am2",
	})
	want := []server{
		{strings.ToLower(long(64)), "http://fits"},
		{"acme_memory", "http://am"}, {"acme_memory_2", "http://am2"}, {"code", "http://c"}, {"digits_2", "http://d2"},
		{"file", "http://f"}, {"memory", "http://m"}, {"run", "http://r"}, {"scheduler", "http://s"}, {"web", "http://w"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("servers:\n got %v\nwant %v", got, want)
	}
}

func long(n int) string { return strings.Repeat("A", n) }

func TestDefaultKeepSession(t *testing.T) {
	for tool, want := range map[string]bool{"memory": true, "run": true, "file": true, "code": true, "scheduler": true, "task": true, "acme_memory": true, "web": false, "browser": false, "memoryx": false} {
		if got := DefaultKeepSession(tool); got != want {
			t.Errorf("DefaultKeepSession(%q) = %v, want %v", tool, got, want)
		}
	}
}

// The calls are offered as <tool>__<call>, in order of name, whatever
// order their server lists them in; schemas are in one canonical form.
func TestOfferNamedAndSorted(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search", "links", "read", "list"}, reverse: true})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch"}})
	team := newMCPServer(t, "acme", serverOpts{calls: []string{"search", "read"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url(), "LNK_TOOL_ACME_MEMORY": team.url()}}
	tt := newTools(t, t.TempDir(), e)
	got, err := tt.Offer(testCtx(t), agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"acme_memory__read", "acme_memory__search", "memory__links", "memory__list", "memory__read", "memory__search", "web__fetch"}
	if !reflect.DeepEqual(names(got), want) {
		t.Fatalf("offered %v, want %v", names(got), want)
	}
	if got[0].Description != "acme's read" {
		t.Errorf("description %q", got[0].Description)
	}
	wantSchema := `{"properties":{"a":{"type":"integer"},"q":{"type":"string"}},"type":"object"}`
	for _, o := range got {
		if o.Schema != wantSchema {
			t.Errorf("%s's schema %s, want %s", o.Name, o.Schema, wantSchema)
		}
	}
	// The server listed them in reverse: proof the order is ours.
	if mem.lists == 0 {
		t.Fatal("memory was never listed")
	}
}

// A conversation narrowed is offered only what its list allows, and a
// call to anything else is answered as a tool there isn't, never made.
func TestNarrowing(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search", "read"}})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	narrowed := &[]string{"memory__search", "web__nothing"}
	got, err := tt.Offer(ctx, agent, narrowed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"memory__search"}; !reflect.DeepEqual(names(got), want) {
		t.Fatalf("offered %v, want %v", names(got), want)
	}
	none, _ := tt.Offer(ctx, agent, &[]string{})
	if len(none) != 0 {
		t.Fatalf("narrowed to none, offered %v", names(none))
	}
	meta := contract.CallMeta{Thread: "telegram:1", Tools: narrowed}
	for _, name := range []string{"web__fetch", "memory__read", "nothing__at_all", "memory__nothing", "memory_search", "__search"} {
		text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "c", Name: name, Input: "{}"}, meta)
		if !failed || text != noSuchTool(name) {
			t.Errorf("call %s: %q, %v; want it answered as no such tool", name, text, failed)
		}
	}
	if _, _, calls := web.counts(); calls != 0 {
		t.Fatalf("web got %d calls, none allowed", calls)
	}
	if _, _, calls := mem.counts(); calls != 0 {
		t.Fatalf("memory got %d calls, none allowed", calls)
	}
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "c", Name: "memory__search", Input: `{"q":"x"}`}, meta)
	if failed || text != `memory says search {"q":"x"}` {
		t.Fatalf("allowed call: %q, %v", text, failed)
	}
}

// Each call carries the conversation, the hops, the tools it has this
// turn and its model in _meta, and the called tool's table of the spec
// only when the turn gives one.
func TestCallMeta(t *testing.T) {
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch", "search"}})
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	narrowed := &[]string{"web__fetch", "memory__search"}
	meta := contract.CallMeta{
		Thread: "slack:C1.2", Hops: 3, Tools: narrowed, Model: "anthropic/claude-test",
		Specs: map[string]json.RawMessage{"web": json.RawMessage(`{"max_bytes":100}`), "memory": json.RawMessage(`{"k":1}`)},
	}
	if _, err := tt.Offer(ctx, agent, narrowed); err != nil {
		t.Fatal(err)
	}
	if text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "web__fetch", Input: `{"q":"u"}`}, meta); failed {
		t.Fatalf("call: %s", text)
	}
	meta.Specs, meta.Tools, meta.Model = nil, nil, ""
	if text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "2", Name: "web__search", Input: ``}, meta); failed {
		t.Fatalf("call: %s", text)
	}
	web.mu.Lock()
	defer web.mu.Unlock()
	if len(web.metas) != 2 {
		t.Fatalf("%d calls reached web", len(web.metas))
	}
	first, _ := json.Marshal(web.metas[0])
	if want := `{"link.local/hops":3,"link.local/model":"anthropic/claude-test","link.local/spec":{"max_bytes":100},"link.local/thread":"slack:C1.2","link.local/tools":["memory__search","web__fetch"]}`; string(first) != want {
		t.Errorf("first _meta\n got %s\nwant %s", first, want)
	}
	second, _ := json.Marshal(web.metas[1])
	if want := `{"link.local/hops":3,"link.local/thread":"slack:C1.2","link.local/tools":["memory__search","web__fetch","web__search"]}`; string(second) != want {
		t.Errorf("second _meta\n got %s\nwant %s", second, want)
	}
	if web.args[1] != "{}" {
		t.Errorf("empty arguments sent as %q, want {}", web.args[1])
	}
}

// A call whose arguments aren't a JSON object is answered so, and never
// made; a tool's own error is answered as one.
func TestCallAnswers(t *testing.T) {
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fail", "big"}})
	e := &env{vars: map[string]string{"LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	meta := contract.CallMeta{Thread: "telegram:1"}
	for _, in := range []string{"[1]", "null", "{", `"x"`} {
		text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "web__fail", Input: in}, meta)
		if !failed || !strings.Contains(text, "not a JSON object") {
			t.Errorf("input %s: %q, %v", in, text, failed)
		}
	}
	if _, _, calls := web.counts(); calls != 0 {
		t.Fatalf("%d calls made with bad arguments", calls)
	}
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "2", Name: "web__fail", Input: "{}"}, meta)
	if !failed || text != "it failed" {
		t.Fatalf("a tool's error: %q, %v", text, failed)
	}
	// A 1 MiB answer is cut past what the harness keeps, which cuts it
	// to 32 KiB, saying so.
	text, failed = tt.Call(ctx, agent, model.ToolCall{ID: "3", Name: "web__big", Input: "{}"}, meta)
	if failed || len(text) != maxAnswerText || !strings.HasPrefix(text, "éé") {
		t.Fatalf("1 MiB answer: %d bytes, failed %v", len(text), failed)
	}
}

// A kept tool's session serves every turn and conversation; another
// tool's session is each turn's own, ended with it; a turn that calls
// no tool starts none.
func TestSessions(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	// The first turn lists every tool: memory's session is kept, web's
	// listing session ended.
	if _, err := tt.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	if s, d, _ := mem.counts(); s != 1 || d != 0 {
		t.Fatalf("memory: %d sessions, %d ended after listing; want 1, 0", s, d)
	}
	if s, d, _ := web.counts(); s != 1 || d != 1 {
		t.Fatalf("web: %d sessions, %d ended after listing; want 1, 1", s, d)
	}
	// Turns that call nothing start nothing.
	for range 3 {
		if _, err := tt.Offer(ctx, agent, nil); err != nil {
			t.Fatal(err)
		}
		tt.EndThreadTurn(ctx, agent, "telegram:1")
	}
	if s, _, _ := mem.counts(); s != 1 {
		t.Fatalf("memory: %d sessions after turns calling nothing", s)
	}
	if s, _, _ := web.counts(); s != 1 {
		t.Fatalf("web: %d sessions after turns calling nothing", s)
	}
	call := func(thread, name string) {
		t.Helper()
		if text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "x", Name: name, Input: "{}"}, contract.CallMeta{Thread: thread}); failed {
			t.Fatalf("%s: %s", name, text)
		}
	}
	// Two turns of two conversations, each calling both tools twice.
	for _, thread := range []string{"telegram:1", "telegram:2"} {
		call(thread, "memory__search")
		call(thread, "web__fetch")
		call(thread, "memory__search")
		call(thread, "web__fetch")
		tt.EndThreadTurn(ctx, agent, thread)
	}
	if s, d, c := mem.counts(); s != 1 || d != 0 || c != 4 {
		t.Fatalf("memory: %d sessions, %d ended, %d calls; want 1, 0, 4", s, d, c)
	}
	if s, d, c := web.counts(); s != 3 || d != 3 || c != 4 {
		t.Fatalf("web: %d sessions, %d ended, %d calls; want 3, 3, 4 (one a turn, ended with it)", s, d, c)
	}
	// Two conversations' turns at once: a session each, and ending one
	// leaves the other's.
	call("telegram:1", "web__fetch")
	call("telegram:2", "web__fetch")
	tt.EndThreadTurn(ctx, agent, "telegram:1")
	call("telegram:2", "web__fetch")
	if s, d, _ := web.counts(); s != 5 || d != 4 {
		t.Fatalf("web: %d sessions, %d ended; want 5, 4", s, d)
	}
	// EndTurn, not saying the conversation, ends every turn's session.
	tt.EndTurn(ctx, agent)
	if s, d, _ := web.counts(); s != 5 || d != 5 {
		t.Fatalf("web after EndTurn: %d sessions, %d ended; want 5, 5", s, d)
	}
}

// Memory's kept session ends once idle for 10 minutes, or an hour after
// it started, and the next call starts another.
func TestKeepSessionLimits(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url()}}
	clk := newClock()
	tt := newTools(t, t.TempDir(), e, func(c *Config) { c.Now = clk.Now })
	ctx := testCtx(t)
	call := func() {
		t.Helper()
		if text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "x", Name: "memory__search", Input: "{}"}, contract.CallMeta{Thread: "telegram:1"}); failed {
			t.Fatal(text)
		}
	}
	call()
	clk.add(9 * time.Minute)
	tt.sweep()
	call()
	if s, d, _ := mem.counts(); s != 1 || d != 0 {
		t.Fatalf("after 9 idle minutes: %d sessions, %d ended", s, d)
	}
	clk.add(10 * time.Minute)
	tt.sweep()
	if s, d, _ := mem.counts(); s != 1 || d != 1 {
		t.Fatalf("after 10 idle minutes: %d sessions, %d ended; want 1, 1", s, d)
	}
	call()
	// Used every 5 minutes, it still ends an hour after it started.
	for range 11 {
		clk.add(5 * time.Minute)
		call()
	}
	if s, d, _ := mem.counts(); s != 2 || d != 1 {
		t.Fatalf("used for 55 minutes: %d sessions, %d ended; want 2, 1", s, d)
	}
	clk.add(5 * time.Minute)
	call()
	if s, d, _ := mem.counts(); s != 3 || d != 2 {
		t.Fatalf("past an hour: %d sessions, %d ended; want 3, 2", s, d)
	}
}

// joined is tools' own instructions as a test compares them: each under
// its name, in order.
func joined(texts []model.ToolText) string {
	var parts []string
	for _, t := range texts {
		parts = append(parts, "## "+t.Tool+"\n\n"+t.Text)
	}
	return strings.Join(parts, "\n\n")
}

// The tools section's words: each offered tool's instructions, sorted by
// its name, at most 2 KB each, none of a tool narrowed away.
func TestInstructions(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}, instructions: "  Search before you answer.\n"})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch"}, instructions: strings.Repeat("w", 2000) + strings.Repeat("é", 100)})
	quiet := newMCPServer(t, "quiet", serverOpts{calls: []string{"hush"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url(), "LNK_TOOL_QUIET": quiet.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	all, err := tt.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := joined(tt.Instructions(agent, all))
	wantWeb := strings.Repeat("w", 2000) + strings.Repeat("é", 24) // 2048 bytes
	if want := "## memory\n\nSearch before you answer.\n\n## web\n\n" + wantWeb; got != want {
		t.Fatalf("instructions:\n%q\nwant\n%q", got, want)
	}
	some, _ := tt.Offer(ctx, agent, &[]string{"web__fetch", "quiet__hush"})
	if got, want := joined(tt.Instructions(agent, some)), "## web\n\n"+wantWeb; got != want {
		t.Fatalf("narrowed to web: %q", got)
	}
	if got := tt.Instructions(agent, nil); len(got) != 0 {
		t.Fatalf("nothing offered: %q", got)
	}
}
