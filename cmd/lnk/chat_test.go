package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/recovery"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/log"
)

// safeBuffer is written by the program's goroutines and read by the test.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// chatIn runs lnk agent chat with input in and environment env.
func chatIn(t *testing.T, env map[string]string, in string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errb safeBuffer
	code := runChat(ctx, args, env, strings.NewReader(in), false, nil, &out, &errb)
	return code, out.String(), errb.String()
}

// From nothing but a home, lnk agent chat starts the agent itself, says
// no provider key is set, answers on the offline model, and ends at
// /quit; its key file is made once, for its owner alone.
func TestChatOffline(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"LNK_HOME": home}
	code, out, errOut := chatIn(t, env, "hello there\n/quit\nnever sent\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "no model provider key is set") || !strings.Contains(errOut, "offline scripted model") {
		t.Fatalf("didn't say it runs offline: %s", errOut)
	}
	if !strings.HasPrefix(out, scripted.Label) || !strings.Contains(out, "hello there") || strings.Contains(out, "never sent") {
		t.Fatalf("answered %q", out)
	}
	p, _ := store.For(home, "main")
	st, err := os.Stat(p.KeyFile())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", st, err)
	}
	key, _ := os.ReadFile(p.KeyFile())
	// Again, ended by the end of input: the same key, the conversation
	// goes on.
	code, out, errOut = chatIn(t, env, "and again\n")
	if code != 0 || !strings.Contains(out, "and again") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if again, _ := os.ReadFile(p.KeyFile()); !bytes.Equal(key, again) {
		t.Fatal("the key file was made again")
	}
	if ev := readChat(t, home, "link:chat"); len(ev) != 4 || ev[0].Text != "hello there" || ev[2].Text != "and again" {
		t.Fatalf("events %+v", ev)
	}
}

func readChat(t *testing.T, home, thread string) []store.Event {
	t.Helper()
	p, _ := store.For(home, "main")
	ev, err := serveDrivers(t, p)[log.Name].Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func serveDrivers(t *testing.T, p store.Paths) map[string]store.Conversations {
	t.Helper()
	d, err := drivers.Set{}.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Answers kept for the chat's thread are shown at its start and before
// each message, each once; other threads' are left for their bridge.
func TestChatShowsPending(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	f := &delivery.Answers{Paths: p}
	ctx := t.Context()
	if _, err := f.KeepForChat(ctx, "link:chat", "kept while you were away", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Keep(ctx, "telegram:5", "telegram's own", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LNK_HOME": home}
	code, out, errOut := chatIn(t, env, "hi\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	i, j := strings.Index(out, "kept while you were away"), strings.Index(out, scripted.Label)
	if i < 0 || j < i {
		t.Fatalf("the kept answer isn't shown first: %q", out)
	}
	if strings.Contains(out, "telegram's own") {
		t.Fatalf("showed another thread's answer: %q", out)
	}
	pending, err := f.Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].Thread != "telegram:5" {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	// Kept before the second message, shown before it.
	if _, err := f.KeepForChat(ctx, "link:chat", "kept between", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	_, out, _ = chatIn(t, env, "")
	if strings.Count(out, "kept while you were away") != 0 || strings.Count(out, "kept between") != 1 {
		t.Fatalf("shown again or not at all: %q", out)
	}
}

// chatTools is an agent's one tool, memory__search, counting its calls.
type chatTools struct {
	mu    sync.Mutex
	calls int
}

func (c *chatTools) Offer(context.Context, string, *[]string) ([]model.Tool, error) {
	return []model.Tool{{Name: "memory__search", Description: "search"}}, nil
}

func (c *chatTools) Call(_ context.Context, _ string, call model.ToolCall, _ contract.CallMeta) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return "found: the notes", call.Input == `{"fail":true}`
}

func (c *chatTools) EndTurn(context.Context, string) {}

// scriptedAgent serves a harness on home whose model answers from q,
// with tools, and writes its key to a file for --key-file.
func scriptedAgent(t *testing.T, home string, q *scripted.Scripted, tools harness.Tools, edit func(*harness.Config)) (url, keyFile string) {
	t.Helper()
	key := []byte("chat-test-key-0123456789")
	keyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, append(key, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := serve.Start(t.Context(), serve.Config{
		Home: home, Key: key, Model: "scripted/test", Tools: tools,
		Edit: func(c *harness.Config) {
			c.Route = func(name string) (model.Route, error) {
				return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
			}
			c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
			if edit != nil {
				edit(c)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL(), keyFile
}

// A tool call is shown as it's made and as it ends, between the text of
// the answer's rounds.
func TestChatShowsToolCalls(t *testing.T) {
	q := scripted.New(
		model.Response{Text: "Let me look.", Calls: []model.ToolCall{{ID: "c1", Name: "memory__search", Input: `{"q":"notes"}`}}},
		model.Response{Calls: []model.ToolCall{{ID: "c2", Name: "memory__search", Input: `{"fail":true}`}}},
		model.Response{Text: "Found your notes."},
	)
	tools := &chatTools{}
	home := t.TempDir()
	url, keyFile := scriptedAgent(t, home, q, tools, nil)
	code, out, errOut := chatIn(t, nil, "find my notes\n", "--endpoint", url, "--key-file", keyFile, "--home", home)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "Let me look.\n⚙ memory__search …\n⚙ memory__search done\n⚙ memory__search …\n⚙ memory__search failed\nFound your notes.\n"
	if out != want {
		t.Fatalf("shown\n%q\nwant\n%q", out, want)
	}
	if tools.calls != 2 {
		t.Fatalf("%d calls", tools.calls)
	}
}

// An answer past 16 MiB is read no further, and the owner is told the
// agent failed; kept since nobody took it, it is shown as a failure too,
// and let go.
func TestChatAnswerTooLong(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", (maxAnswerRead+(1<<20))/16)
	q := scripted.New(model.Response{Text: big}, model.Response{Text: "short again"})
	home := t.TempDir()
	// The harness's clock, moved on by the test: the grace after a turn
	// passes when the test says, not on the wall clock.
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	url, keyFile := scriptedAgent(t, home, q, nil, func(c *harness.Config) { c.MaxAnswer = 64 << 20; c.Now = now })
	args := []string{"--endpoint", url, "--key-file", keyFile, "--home", home}
	code, out, errOut := chatIn(t, nil, "tell me everything\n", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasSuffix(out, "[The agent failed: the answer passed 16 MiB, the most read of one. The rest of it wasn't read.]\n") {
		t.Fatalf("not told: %q", out[max(0, len(out)-300):])
	}
	if len(out) > maxAnswerRead+4096 {
		t.Fatalf("read %d bytes of the answer", len(out))
	}
	// The turn runs to its end though its caller went, and its answer,
	// which never reached it, is kept: at once when the harness saw the
	// caller gone, else once the grace after its turn has passed. Each
	// ask moves the clock past that grace, so the answer is handed over
	// at the first ask after the turn has ended, however slow that is.
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	a := &agentConn{url: url, key: bytes.TrimSpace(key), agent: "main"}
	var kept []contract.RecoveredAnswer
	testwait.For(t, 60*time.Second, "the answer that never reached its caller kept", func() bool {
		ahead.Add(int64(delivery.Grace + time.Second))
		if kept, err = a.pending(t.Context(), "link:chat"); err != nil {
			t.Fatal(err)
		}
		return len(kept) > 0
	})
	// Too long for one message, it is handed over cut to fit one, saying so.
	if len(kept) != 1 || !cutOf(kept[0].Text, big) {
		t.Fatalf("kept %d answers, the first of %d bytes, not %d bytes cut to fit a message", len(kept), len(kept[0].Text), len(big))
	}
	if err := a.letGo(t.Context(), []string{kept[0].ID}); err != nil {
		t.Fatal(err)
	}
	// The next message begins a turn of its own.
	code, out, errOut = chatIn(t, nil, "and now?\n", args...)
	if code != 0 || out != "short again\n" {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	// Its answer is held as sent until the harness, its response written,
	// lets it go.
	p, _ := store.For(home, "main")
	f := &delivery.Answers{Paths: p}
	testwait.For(t, 60*time.Second, "the second message's answer let go", func() bool {
		pending, err := f.Pending(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) > 1 || len(pending) == 1 && pending[0].Text != "short again" {
			t.Fatalf("kept after the second message: %+v", pending)
		}
		return len(pending) == 0
	})
	// An answer kept past 16 MiB is shown cut to fit a message, saying
	// so, and let go.
	if _, err := f.KeepForChat(t.Context(), "link:chat", big, time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = chatIn(t, nil, "", args...)
	head := "[An answer kept for link:chat while nobody waited:]\n"
	if code != 0 || !strings.HasPrefix(out, head) || !cutOf(strings.TrimSuffix(out[len(head):], "\n"), big) {
		t.Fatalf("exit %d, %q: %s", code, out[:min(len(out), 500)], errOut)
	}
	if pending, err := f.Pending(t.Context()); len(pending) != 0 || err != nil {
		t.Fatalf("still kept: %d, %v", len(pending), err)
	}
}

// cutOf says whether text is long cut to fit a message: a start of it,
// then recovery.CutNote, within contract.MaxRecoverResult.
func cutOf(text, long string) bool {
	start, ok := strings.CutSuffix(text, recovery.CutNote)
	return ok && len(text) <= contract.MaxRecoverResult && len(start) > len(long)/2 && strings.HasPrefix(long, start)
}

func TestChatFlags(t *testing.T) {
	for _, args := range [][]string{{"--thread", "telegram:1"}, {"--thread", "link:"}, {"words"}, {"--model", "a b"}, {"--wait", "0s"}} {
		if code, _, _ := chatIn(t, map[string]string{"LNK_HOME": t.TempDir()}, "", args...); code != 2 {
			t.Errorf("%q: exit %d", args, code)
		}
	}
	// An endpoint without a key at hand.
	if code, _, errOut := chatIn(t, map[string]string{"LNK_HOME": t.TempDir()}, "", "--endpoint", "http://127.0.0.1:1/acp"); code != 1 || !strings.Contains(errOut, "--key-file") {
		t.Errorf("no key: exit %d, %s", code, errOut)
	}
}

// With a provider's key set, the agent started here runs on that
// provider's default model and has the MCP tools its environment names,
// as lnk-link-harness's would: a model on a fake Anthropic calls
// web__fetch on a real MCP server, and the chat shows the call.
func TestChatProviderAndTools(t *testing.T) {
	var calls atomic.Int32
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	web.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the page"}}}, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return web }, nil))
	defer mcpSrv.Close()
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "web__fetch", Input: `{"url":"x"}`}}},
		fakeprovider.Turn{Text: "fetched"},
	)
	env := map[string]string{"LNK_HOME": t.TempDir(), "LNK_TOOL_WEB": mcpSrv.URL, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	code, out, errOut := chatIn(t, env, "fetch it\n")
	if code != 0 || out != "⚙ web__fetch …\n⚙ web__fetch done\nfetched\n" {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "runs on "+serve.DefaultAnthropic+" (ANTHROPIC_API_KEY is set)") {
		t.Fatalf("didn't say its model: %s", errOut)
	}
	if reqs := fake.Requests(); len(reqs) != 2 || reqs[0].Model != "claude-opus-5-5" {
		t.Fatalf("the provider was asked %+v", reqs)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls", calls.Load())
	}
}

// With $LNK_PORT's endpoint answering and the agent's key file at hand,
// chat talks to that agent rather than starting one.
func TestChatFindsRunningAgent(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	key, err := ensureKey(p.KeyFile())
	if err != nil {
		t.Fatal(err)
	}
	q := scripted.New(model.Response{Text: "from the running agent"})
	s, err := serve.Start(t.Context(), serve.Config{
		Home: home, Key: key, Model: "scripted/test",
		Edit: func(c *harness.Config) {
			c.Route = func(name string) (model.Route, error) {
				return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
			}
			c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://127.0.0.1:"), "/acp")
	code, out, errOut := chatIn(t, map[string]string{"LNK_HOME": home, "LNK_PORT": port}, "hi\n")
	if code != 0 || out != "from the running agent\n" || !strings.Contains(errOut, "talking to agent main at "+s.URL()) || strings.Contains(errOut, "started agent") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
}
