package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// A tool that hangs on start is given up on after StartTimeout, its
// connection closed; never listed, it's left out of that turn, and tried
// again only after RetryAfter.
func TestHangOnStart(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	slow := newHangServer(t)
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_SLOW": slow.srv.URL}}
	clk := newClock()
	tt := newTools(t, t.TempDir(), e, func(c *Config) {
		c.Now = clk.Now
		c.StartTimeout = 300 * time.Millisecond
	})
	ctx := testCtx(t)
	began := time.Now()
	got, err := tt.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if want := []string{"memory__search"}; strings.Join(names(got), ",") != strings.Join(want, ",") {
		t.Fatalf("offered %v, want %v", names(got), want)
	}
	if took < 300*time.Millisecond || took > 20*time.Second {
		t.Fatalf("the turn waited %s for a tool given 300ms", took)
	}
	select {
	case <-slow.closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the hanging tool's connection was never closed")
	}
	asked := slow.requests()
	// The same minute: left out again without being asked.
	if _, err := tt.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	if slow.requests() != asked {
		t.Fatalf("asked again at once (%d requests, %d before)", slow.requests(), asked)
	}
	// A call to it is answered as one there isn't: it was never offered.
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "slow__x", Input: "{}"}, contract.CallMeta{Thread: "telegram:1"})
	if !failed || !strings.Contains(text, "unavailable") && text != noSuchTool("slow__x") {
		t.Fatalf("call to a hanging tool: %q, %v", text, failed)
	}
	clk.add(DefaultRetryAfter)
	if _, err := tt.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	if slow.requests() <= asked {
		t.Fatal("not tried again after RetryAfter")
	}
	// Nothing of it reached tool-lists.json.
	if b := readListsFile(t, tt.homeOf(t), agent); strings.Contains(string(b), `"slow"`) {
		t.Fatalf("tool-lists.json holds the tool never listed:\n%s", b)
	}
}

// A tool that dies after it was listed is still offered, and a call to
// it is answered as unavailable, its address never told.
func TestDiesAfterListing(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"fetch"}})
	secretURL := web.url() + "/proxy-secret-0123456789"
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": secretURL}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	first, err := tt.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	// memory's kept session, and web, both die.
	mem.close()
	web.close()
	again, err := tt.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, first, again) || len(again) != 2 {
		t.Fatalf("offered %v after the tools died, want %v", names(again), names(first))
	}
	for _, name := range []string{"memory__search", "web__fetch"} {
		text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: name, Input: "{}"}, contract.CallMeta{Thread: "telegram:1"})
		tool, _, _ := strings.Cut(name, "__")
		if !failed || !strings.HasPrefix(text, "The tool "+tool+" is unavailable: ") {
			t.Errorf("call %s to a dead tool: %q, %v", name, text, failed)
		}
		if strings.Contains(text, "proxy-secret") || strings.Contains(text, mem.srv.Listener.Addr().String()) {
			t.Errorf("the answer tells the address: %q", text)
		}
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// A restart with one tool down offers, and describes, the same tools,
// byte for byte, from tool-lists.json, which isn't written again; a tool
// taken away or moved isn't offered from it.
func TestRestartOneDown(t *testing.T) {
	home := t.TempDir()
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search", "read"}, instructions: "Memory's words."})
	web := newMCPServer(t, "web", serverOpts{calls: []string{"search", "fetch"}, instructions: "Web's words.", reverse: true})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_WEB": web.url()}}
	ctx := testCtx(t)

	first := newTools(t, home, e)
	tools1, err := first.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	words1 := joined(first.Instructions(agent, tools1))
	first.Close()
	file1 := readListsFile(t, home, agent)
	p, _ := store.For(home, agent)
	info1, err := os.Stat(p.ToolLists())
	if err != nil {
		t.Fatal(err)
	}

	web.close()
	second := newTools(t, home, e, func(c *Config) { c.StartTimeout = 2 * time.Second })
	tools2, err := second.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, tools1, tools2) {
		t.Fatalf("offered across a restart with web down:\n%v\nwant\n%v", tools2, tools1)
	}
	if words2 := joined(second.Instructions(agent, tools2)); words2 != words1 || !strings.Contains(words2, "Web's words.") {
		t.Fatalf("instructions across a restart:\n%q\nwant\n%q", words2, words1)
	}
	info2, _ := os.Stat(p.ToolLists())
	if file2 := readListsFile(t, home, agent); string(file2) != string(file1) || !info2.ModTime().Equal(info1.ModTime()) {
		t.Fatalf("tool-lists.json written again with no list changed")
	}
	second.Close()

	// web moved: its old list isn't offered; web taken away: the file
	// forgets it.
	e.set("LNK_TOOL_WEB", web.url()+"/moved")
	third := newTools(t, home, e, func(c *Config) { c.StartTimeout = 2 * time.Second })
	tools3, _ := third.Offer(ctx, agent, nil)
	if got := strings.Join(names(tools3), ","); got != "memory__read,memory__search" {
		t.Fatalf("web moved and down, offered %s", got)
	}
	third.Close()
	e.set("LNK_TOOL_WEB", "")
	fourth := newTools(t, home, e)
	if _, err := fourth.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	if b := readListsFile(t, home, agent); strings.Contains(string(b), `"web"`) {
		t.Fatalf("tool-lists.json keeps a tool taken away:\n%s", b)
	}
}

// tool-lists.json: each tool's name, a hash of its address (never the
// address), its instructions and calls; written when a list changes; a
// corrupt one is as none, and made again.
func TestListsFile(t *testing.T) {
	home := t.TempDir()
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}, instructions: "hi"})
	secret := mem.url() + "/?key=secret-abcdef"
	e := &env{vars: map[string]string{"LNK_MEMORY": secret}}
	ctx := testCtx(t)
	tt := newTools(t, home, e)
	if _, err := tt.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	b := readListsFile(t, home, agent)
	if strings.Contains(string(b), "secret") || strings.Contains(string(b), mem.srv.Listener.Addr().String()) {
		t.Fatalf("tool-lists.json holds the address:\n%s", b)
	}
	lists, err := parseLists(b)
	if err != nil {
		t.Fatal(err)
	}
	l := lists["memory"]
	if l.Address != addressHash(secret) || l.Instructions != "hi" || len(l.Calls) != 1 || l.Calls[0].Name != "search" {
		t.Fatalf("kept %+v", l)
	}
	tt.Close()

	p, _ := store.For(home, agent)
	if err := os.WriteFile(p.ToolLists(), []byte(`{"tools":[{"tool":"memory","address":"nothex"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	again := newTools(t, home, e)
	if _, err := again.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	if got := readListsFile(t, home, agent); string(got) != string(b) {
		t.Fatalf("a corrupt tool-lists.json not made again:\n%s", got)
	}
	// Another agent has its own.
	other := &env{vars: map[string]string{}}
	per := newTools(t, home, other, func(c *Config) {
		c.Env = func(a string) map[string]string {
			if a == "second" {
				return map[string]string{"LNK_TOOL_WEB": mem.url()}
			}
			return e.get(a)
		}
	})
	offered, _ := per.Offer(ctx, "second", nil)
	if got := strings.Join(names(offered), ","); got != "web__search" {
		t.Fatalf("second agent offered %s", got)
	}
	if b2 := readListsFile(t, home, "second"); !strings.Contains(string(b2), `"web"`) || strings.Contains(string(b2), `"memory"`) {
		t.Fatalf("second agent's file:\n%s", b2)
	}
}

// homeOf is the home a test's Tools keeps its files in.
func (t *Tools) homeOf(tb testing.TB) string {
	path, err := t.cfg.ToolLists(agent)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSuffix(path, "/agents/"+agent+"/tool-lists.json")
}

func FuzzParseLists(f *testing.F) {
	f.Add([]byte(`{"tools":[]}`))
	f.Add([]byte(`{"tools":[{"tool":"memory","address":"` + addressHash("x") + `","instructions":"hi","calls":[{"name":"a","schema":{"type":"object"}},{"name":"b","description":"d","schema":{"type":"object","properties":{}}}]}]}`))
	f.Add([]byte(`{"tools":[{"tool":"memory","address":"` + addressHash("x") + `","calls":[{"name":"b","schema":{}},{"name":"a","schema":{}}]}]}`))
	f.Add([]byte(`{"tools":[{"tool":"Bad__name","address":"00","calls":null}]}`))
	f.Add([]byte(`{"tools":[{"tool":"m","address":"` + addressHash("x") + `","calls":[{"name":"a","schema":[1]}]}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"tools":[{"tool":"m","address":"` + addressHash("x") + `"},{"tool":"m","address":"` + addressHash("y") + `"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lists, err := parseLists(b)
		if err != nil {
			return
		}
		// What parses encodes and parses again to the same lists.
		again, err := parseLists(encodeLists(lists))
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if string(encodeLists(again)) != string(encodeLists(lists)) {
			t.Fatal("lists changed on a round trip")
		}
		for name, l := range lists {
			if !toolName(name) || len(l.Instructions) > MaxInstructions {
				t.Fatalf("accepted %q", name)
			}
		}
	})
}

// A kept session the server forgot (it started over) is started again
// and the call made there, once: the server said so before taking it.
func TestSessionForgotten(t *testing.T) {
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	call := contract.CallMeta{Thread: "telegram:1"}
	if text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "memory__search", Input: "{}"}, call); failed {
		t.Fatal(text)
	}
	mem.forget()
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "2", Name: "memory__search", Input: "{}"}, call)
	if failed || text != "memory says search {}" {
		t.Fatalf("after the server forgot the session: %q, %v", text, failed)
	}
	if s, _, c := mem.counts(); s != 2 || c != 2 {
		t.Fatalf("%d sessions, %d calls; want 2, 2", s, c)
	}
}

// A round's calls to one tool that isn't kept share the turn's one
// session, started once; a call its turn stops is told so.
func TestOneStartForARound(t *testing.T) {
	web := newMCPServer(t, "web", serverOpts{calls: []string{"block", "fetch"}})
	e := &env{vars: map[string]string{"LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	if _, err := tt.Offer(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	before, _, _ := web.counts()
	meta := contract.CallMeta{Thread: "telegram:1"}
	done := make(chan string, 8)
	for i := range 8 {
		go func() {
			text, _ := tt.Call(ctx, agent, model.ToolCall{ID: strconv.Itoa(i), Name: "web__fetch", Input: "{}"}, meta)
			done <- text
		}()
	}
	for range 8 {
		if text := <-done; text != "web says fetch {}" {
			t.Fatalf("answered %q", text)
		}
	}
	if s, _, _ := web.counts(); s != before+1 {
		t.Fatalf("%d sessions started for one round, want 1", s-before)
	}
	// The fetches' starts are taken first, so only block's start stops
	// the call, mid-call.
	for len(web.started) > 0 {
		<-web.started
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-web.started:
		case <-cctx.Done():
		}
		cancel()
	}()
	text, failed := tt.Call(cctx, agent, model.ToolCall{ID: "x", Name: "web__block", Input: "{}"}, meta)
	if !failed || !strings.HasPrefix(text, "The call was stopped") {
		t.Fatalf("a call its turn stopped: %q, %v", text, failed)
	}
}

func FuzzServers(f *testing.F) {
	f.Add("LNK_TOOL_WEB", "http://w", "LNK_MEMORY", "http://m")
	f.Add("LNK_TOOL_A__B", "x", "LNK_TOOL_MEMORY", "y")
	f.Add("LNK_TOOL_Ü", " ", "LNK_RUN", "http://r")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		got := servers(map[string]string{k1: v1, k2: v2})
		for i, s := range got {
			if !toolName(s.name) || s.addr == "" || strings.TrimSpace(s.addr) != s.addr {
				t.Fatalf("server %+v", s)
			}
			if i > 0 && got[i-1].name >= s.name {
				t.Fatalf("not sorted, or twice: %+v", got)
			}
			if err := contract.CheckToolName(offered(s.name, "x")); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
	})
}

// Close with a call in flight that its tool never answers: the call is
// stopped and answered as unavailable, the harness closing, and Close
// returns rather than wait for the answer (a session's close waits for
// its calls in flight).
func TestCloseMidCall(t *testing.T) {
	web := newMCPServer(t, "web", serverOpts{calls: []string{"block"}})
	e := &env{vars: map[string]string{"LNK_TOOL_WEB": web.url()}}
	tt := newTools(t, t.TempDir(), e)
	ctx := testCtx(t)
	answered := make(chan string, 1)
	go func() {
		text, _ := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "web__block", Input: "{}"}, contract.CallMeta{Thread: "telegram:1"})
		answered <- text
	}()
	select {
	case <-web.started:
	case <-ctx.Done():
		t.Fatal("the call never reached the tool")
	}
	closed := make(chan struct{})
	go func() {
		tt.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for a call its tool never answers")
	}
	select {
	case text := <-answered:
		if want := "The tool web is unavailable: call web__block: " + errClosed.Error(); !strings.HasPrefix(text, want) {
			t.Fatalf("the call stopped by Close was answered %q, want %q…", text, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call stopped by Close never returned")
	}
	// A Tools closed starts nothing more.
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "2", Name: "web__block", Input: "{}"}, contract.CallMeta{Thread: "telegram:2"})
	if !failed || !strings.Contains(text, errClosed.Error()) {
		t.Fatalf("a call after Close: %q, %v", text, failed)
	}
}

// readLists reads tool-lists.json never through a link, and at most
// maxListsFile bytes: a link is refused (and the file made again, as a
// corrupt one is), a longer file is corrupt, none is none.
func TestReadListsBounded(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	good := encodeLists(map[string]listing{"memory": {Tool: "memory", Address: addressHash("x")}})
	other := filepath.Join(dir, "other-agent-lists.json")
	if err := os.WriteFile(other, good, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tool-lists.json")
	if lists, b, err := readLists(ctx, path); lists != nil || b != nil || err != nil {
		t.Fatalf("no file: %v, %q, %v; want none and no error", lists, b, err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if lists, _, err := readLists(ctx, path); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("a link to another's file: %v, %v; want it refused, not followed", lists, err)
	}
	os.Remove(path)
	if err := os.WriteFile(path, append(good, bytes.Repeat([]byte(" "), maxListsFile)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readLists(ctx, path); !errors.Is(err, errCorruptLists) {
		t.Fatalf("a file over %d bytes: %v, want it corrupt", maxListsFile, err)
	}
}

// A tool answering with an endless JSON body is given up on once its
// answer passes 16 MiB, its connection closed: the MCP SDK reads such a
// body whole, so the harness read it all into memory, for as long as
// the tool sent it (up to StartTimeout, gigabytes on a loopback).
func TestAnswerBodyBounded(t *testing.T) {
	const flood = 96 << 20
	var wrote atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		defer func() {
			select {
			case <-done:
			default:
				close(done)
			}
		}()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		n, _ := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`)
		wrote.Add(int64(n))
		chunk := strings.Repeat("A", 64<<10)
		for wrote.Load() < flood {
			n, err := io.WriteString(w, chunk)
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	mem := newMCPServer(t, "memory", serverOpts{calls: []string{"search"}})
	e := &env{vars: map[string]string{"LNK_MEMORY": mem.url(), "LNK_TOOL_FLOOD": srv.URL}}
	tt := newTools(t, t.TempDir(), e)
	got, err := tt.Offer(testCtx(t), agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"memory__search"}; strings.Join(names(got), ",") != strings.Join(want, ",") {
		t.Fatalf("offered %v, want %v", names(got), want)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the flood's answer is still being read after 30 s")
	}
	if n := wrote.Load(); n >= flood {
		t.Fatalf("the harness read the whole %d-byte answer; want it given up on past %d", n, maxJSONAnswer)
	}
}
