package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// testAgent is one agent of an agents file under test.
type testAgent struct {
	line agentLine
	key  []byte
	url  string
}

// startAgents runs the real program with --agents over agents (their
// ports 0, each given a key file of its own) until the test ends or stop.
func startAgents(t *testing.T, agents []*testAgent, extra ...string) (m *Main, stop func()) {
	t.Helper()
	return startAgentsFile(t, agents, 0o600, extra...)
}

// startAgentsFile is startAgents with the agents file's mode.
func startAgentsFile(t *testing.T, agents []*testAgent, mode os.FileMode, extra ...string) (m *Main, stop func()) {
	t.Helper()
	dir := t.TempDir()
	var file strings.Builder
	for _, a := range agents {
		a.line.KeyFile = filepath.Join(dir, a.line.Name+".key")
		if err := os.WriteFile(a.line.KeyFile, append(a.key, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(a.line)
		file.Write(append(b, '\n'))
	}
	path := filepath.Join(dir, "agents")
	if err := os.WriteFile(path, []byte(file.String()), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	out := &syncBuffer{}
	m = NewMain(out, &syncBuffer{}, map[string]string{})
	if err := m.ParseFlags(append([]string{"serve", "--agents", path}, extra...)); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.Run(context.Background()) }()
	select {
	case <-m.Ready():
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(agents) {
		t.Fatalf("printed %q", out.String())
	}
	for i, a := range agents {
		f := strings.Fields(lines[i])
		if len(f) != 3 || f[0] != "endpoint" || f[2] != a.line.Name || !strings.HasPrefix(f[1], "http://127.0.0.1:") {
			t.Fatalf("printed %q for %s", lines[i], a.line.Name)
		}
		a.url = f[1]
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			m.Close()
			if err := <-errc; err != nil {
				t.Errorf("run ended with %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return m, stop
}

// client opens one message's connection to url as agent with key, and
// its ACP client collecting the streamed text into got.
func client(ctx context.Context, url string, key []byte, agent, id string, got *strings.Builder) (*acp.Client, error) {
	return clientOpts(ctx, endpoint.DialOptions{URL: url, Key: key, Agent: agent, AgentID: id}, got)
}

// clientOpts is client with the dial's options.
func clientOpts(ctx context.Context, o endpoint.DialOptions, got *strings.Builder) (*acp.Client, error) {
	conn, err := endpoint.Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if got == nil || method != acp.MethodSessionUpdate || json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || u.Content == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got.WriteString(u.Content.Text)
	})
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sayAs sends one message to url as agent with key, and returns its
// streamed answer.
func sayAs(ctx context.Context, url string, key []byte, agent, thread, text string) (string, error) {
	var got strings.Builder
	c, err := client(ctx, url, key, agent, "", &got)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Resume(ctx, thread); err != nil {
		return "", err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		return "", err
	}
	return got.String(), nil
}

// recoverAs asks url's _link/recover as agent with key.
func recoverAs(ctx context.Context, url string, key []byte, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	c, err := client(ctx, url, key, agent, "", nil)
	if err != nil {
		return contract.RecoverResult{}, err
	}
	defer c.Close()
	return c.Recover(ctx, p)
}

// mcpTool serves one MCP tool, call, answering text and counting calls.
func mcpTool(t *testing.T, call, text string, calls *atomic.Int32) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: call, Description: call, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Two agents of one owner in one process: each answered on its own port
// as itself, from its own home, with its own model, tools and key; a
// request naming the other needs the other's key; and nothing of one
// agent's reaches the other: not its conversations, its tools, its key,
// its paths, nor its kept answers through _link/recover.
func TestAgentsApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var secretCalls, webCalls atomic.Int32
	secrets := mcpTool(t, "read", "the vault code 0815", &secretCalls)
	web := mcpTool(t, "fetch", "beta's page", &webCalls)
	fakeA, fakeB := fakeprovider.New(), fakeprovider.New()
	defer fakeA.Close()
	defer fakeB.Close()
	homeA, homeB := t.TempDir(), t.TempDir()
	for _, h := range []struct{ home, agent string }{{homeA, "alpha"}, {homeB, "beta"}} {
		p, _ := store.For(h.home, h.agent)
		if err := os.MkdirAll(p.Root, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p.Config(), []byte(`{"model":{"name":"anthropic/claude-test"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A turn a crash left in alpha's store: alpha finishes it and keeps
	// its answer for alpha's _link/recover alone.
	pa, _ := store.For(homeA, "alpha")
	if err := log.Open(pa.Chats()).Append(ctx, "telegram:9", store.Event{Seq: 1, Time: time.Now().UTC(), Kind: store.KindMessage, Header: "[x]", Text: "alpha's crashed message"}); err != nil {
		t.Fatal(err)
	}
	alpha := &testAgent{line: agentLine{Name: "alpha", ID: "id-alpha", Home: homeA, Env: map[string]string{"LNK_TOOL_SECRETS": secrets, "ANTHROPIC_API_KEY": "ka", "ANTHROPIC_BASE_URL": fakeA.URL()}}, key: []byte("alpha-key-0123456789abcdef")}
	beta := &testAgent{line: agentLine{Name: "beta", ID: "id-beta", Home: homeB, Env: map[string]string{"LNK_TOOL_WEB": web, "ANTHROPIC_API_KEY": "kb", "ANTHROPIC_BASE_URL": fakeB.URL()}}, key: []byte("beta-key-0123456789abcdef0")}
	startAgents(t, []*testAgent{alpha, beta})
	if alpha.url == beta.url {
		t.Fatalf("one port for both: %s", alpha.url)
	}

	// Keys: each port answers an agent with that agent's key alone. The
	// other's key fails the proof (so the bridge sends nothing more), and
	// sent without the proof, the upgrade (401).
	for _, c := range []struct {
		url, agent, id string
		key            []byte
		want           error
	}{
		{alpha.url, "beta", "", alpha.key, endpoint.ErrUnauthorized},
		{alpha.url, "alpha", "", beta.key, endpoint.ErrUnauthorized},
		{alpha.url, "", "", beta.key, endpoint.ErrUnauthorized},
		{beta.url, "alpha", "", beta.key, endpoint.ErrUnauthorized},
		{alpha.url, "beta", "id-alpha", beta.key, endpoint.ErrUnknownAgent},
		{alpha.url, "gamma", "", alpha.key, endpoint.ErrUnknownAgent},
		{alpha.url, "beta", "id-beta", beta.key, nil},
		{beta.url, "", "id-beta", beta.key, nil},
	} {
		for _, noProof := range []bool{false, true} {
			want := c.want
			if want == endpoint.ErrUnauthorized && !noProof {
				want = endpoint.ErrBadProof
			}
			c2, err := clientOpts(ctx, endpoint.DialOptions{URL: c.url, Key: c.key, Agent: c.agent, AgentID: c.id, NoProof: noProof}, nil)
			if err == nil {
				c2.Close()
			}
			if !errors.Is(err, want) {
				t.Errorf("at %s as %q (ID %q) with %.5s's key, without the proof %v: %v, want %v", c.url, c.agent, c.id, c.key, noProof, err, want)
			}
		}
	}

	// Conversations: the same thread is each agent's own.
	if got, err := sayAs(ctx, alpha.url, alpha.key, "", "telegram:1", "alpha remembers the code 4711"); err != nil || !strings.Contains(got, "4711") {
		t.Fatalf("alpha answered %q, %v", got, err)
	}
	// Named on alpha's port, beta answers as beta: beta's model, home.
	if got, err := sayAs(ctx, alpha.url, beta.key, "beta", "telegram:1", "what is the code?"); err != nil || !strings.Contains(got, "what is the code?") {
		t.Fatalf("beta answered %q, %v", got, err)
	}
	for _, r := range fakeB.Requests() {
		if strings.Contains(string(r.Body), "4711") {
			t.Fatalf("beta's model was sent alpha's conversation: %s", r.Body)
		}
	}
	if n := len(fakeB.Requests()); n != 1 {
		t.Fatalf("beta's model had %d requests, want 1", n)
	}

	// Tools: beta is offered its own, and a call to alpha's is no tool.
	fakeB.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "secrets__read", Input: `{}`}, {ID: "toolu_2", Name: "web__fetch", Input: `{}`}}},
		fakeprovider.Turn{Text: "done"},
	)
	if got, err := sayAs(ctx, beta.url, beta.key, "", "telegram:2", "read alpha's secret"); err != nil || got != "done" {
		t.Fatalf("beta answered %q, %v", got, err)
	}
	reqs := fakeB.Requests()
	if last := reqs[len(reqs)-2]; slices.Contains(last.Tools, "secrets__read") || !slices.Contains(last.Tools, "web__fetch") {
		t.Fatalf("beta was offered %v", last.Tools)
	}
	if secretCalls.Load() != 0 || webCalls.Load() != 1 {
		t.Fatalf("alpha's tool called %d times, beta's %d; want 0 and 1", secretCalls.Load(), webCalls.Load())
	}
	if body := string(reqs[len(reqs)-1].Body); strings.Contains(body, "0815") || !strings.Contains(body, "There is no tool secrets__read") || !strings.Contains(body, "beta's page") {
		t.Fatalf("beta's model was told %s", body)
	}

	// Paths: a thread naming a folder outside its own is refused.
	for _, thread := range []string{"telegram:../../../alpha", "link:../alpha", "../alpha/chats/telegram_1"} {
		if _, err := sayAs(ctx, beta.url, beta.key, "", thread, "x"); err == nil {
			t.Errorf("beta took thread %q", thread)
		}
	}

	// Kept answers: alpha's crashed turn's answer is alpha's alone.
	var kept contract.RecoverResult
	testwait.For(t, 20*time.Second, "alpha to finish its crashed turn", func() bool {
		for _, b := range []string{alpha.url, beta.url} {
			res, err := recoverAs(ctx, b, beta.key, "beta", contract.RecoverParams{TwoPhase: true})
			if err != nil || len(res.Answers) != 0 {
				t.Fatalf("beta's recover at %s: %+v, %v", b, res, err)
			}
		}
		var err error
		if kept, err = recoverAs(ctx, alpha.url, alpha.key, "alpha", contract.RecoverParams{TwoPhase: true}); err != nil {
			t.Fatal(err)
		}
		return len(kept.Answers) > 0
	})
	if len(kept.Answers) != 1 || kept.Answers[0].Thread != "telegram:9" || kept.Answers[0].ID == "" {
		t.Fatalf("alpha's kept answers %+v", kept.Answers)
	}
	// beta saying alpha's answer is done lets nothing of alpha's go.
	if _, err := recoverAs(ctx, beta.url, beta.key, "beta", contract.RecoverParams{Done: []string{kept.Answers[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if again, err := recoverAs(ctx, alpha.url, alpha.key, "alpha", contract.RecoverParams{TwoPhase: true}); err != nil || len(again.Answers) != 1 || again.Answers[0].ID != kept.Answers[0].ID {
		t.Fatalf("alpha's kept answers after beta's done: %+v, %v", again, err)
	}
	if _, err := recoverAs(ctx, alpha.url, beta.key, "alpha", contract.RecoverParams{Done: []string{kept.Answers[0].ID}}); !errors.Is(err, endpoint.ErrBadProof) {
		t.Fatalf("alpha's recover with beta's key: %v", err)
	}

	// Each home holds its own agent's folder alone.
	for _, h := range []struct{ home, agent string }{{homeA, "alpha"}, {homeB, "beta"}} {
		entries, err := os.ReadDir(filepath.Join(h.home, "agents"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if fmt.Sprint(names) != "["+h.agent+"]" {
			t.Errorf("%s's home holds agents %v", h.agent, names)
		}
	}
}

// With every agent asleep, the program ends on its own, cleanly; the
// next message starts it again (docs/agents.md).
func TestEndsAsleep(t *testing.T) {
	home := t.TempDir()
	agents := []*testAgent{
		{line: agentLine{Name: "alpha", Home: home}, key: []byte("alpha-key-0123456789abcdef")},
		{line: agentLine{Name: "beta", Home: home}, key: []byte("beta-key-0123456789abcdef0")},
	}
	m, _ := startAgents(t, agents, "--sleep-after", "300ms", "--model", "offline")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if got, err := sayAs(ctx, agents[0].url, agents[0].key, "", "telegram:1", "hello"); err != nil || !strings.Contains(got, "hello") {
		t.Fatalf("answered %q, %v", got, err)
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		t.Fatal("still running with every agent asleep")
	}
	if _, err := sayAs(ctx, agents[0].url, agents[0].key, "", "telegram:1", "anyone?"); err == nil {
		t.Fatal("answered once ended")
	}
}
