package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// An agent idle for SleepAfter sleeps: its tool sessions end and its
// harness (its caches, its stores) is let go, while its port stays
// served; with every agent asleep, AllAsleep says so; and the next
// message wakes it on the same port, the conversation going on.
func TestSleep(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var calls atomic.Int32
	mem := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	mem.AddTool(&mcp.Tool{Name: "search", Description: "search notes", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a note"}}}, nil
		})
	memSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mem }, nil))
	defer memSrv.Close()
	sessions := func() int {
		n := 0
		for range mem.Sessions() {
			n++
		}
		return n
	}
	q := scripted.New(
		model.Response{Calls: []model.ToolCall{{ID: "c1", Name: "memory__search", Input: `{}`}}},
		model.Response{Text: "found a note"},
		model.Response{Text: "awake again"},
	)
	home := t.TempDir()
	keys := map[string][]byte{"alpha": []byte("alpha-key-0123456789abcdef"), "beta": []byte("beta-key-0123456789abcdef0")}
	var cfgs []Config
	for _, name := range []string{"alpha", "beta"} {
		cfgs = append(cfgs, Config{
			Home: home, Agent: name, Key: keys[name], Model: "scripted/test", SleepAfter: 2 * time.Second,
			Env: map[string]string{"LNK_MEMORY": memSrv.URL},
			Edit: func(c *harness.Config) {
				c.Route = func(name string) (model.Route, error) {
					return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
				}
				c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
			},
		})
	}
	s, err := StartAll(ctx, cfgs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	alpha := s.URLOf("alpha")
	say := func(text string) string {
		t.Helper()
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: alpha, Key: keys["alpha"]})
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		c := acp.NewClient(ctx, conn, chunks(&got))
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Resume(ctx, "telegram:1"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prompt(ctx, "telegram:1", []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
			t.Fatal(err)
		}
		c.Close()
		return got.String()
	}
	if got := say("find my note"); got != "found a note" {
		t.Fatalf("answered %q", got)
	}
	// Awake, alpha keeps its memory session between turns.
	if s.Asleep("alpha") || sessions() != 1 || calls.Load() != 1 {
		t.Fatalf("just answered: asleep %v, %d sessions, %d calls", s.Asleep("alpha"), sessions(), calls.Load())
	}
	select {
	case <-s.AllAsleep():
	case <-ctx.Done():
		t.Fatal("the agents never slept")
	}
	if n := sessions(); n != 0 {
		t.Fatalf("asleep, alpha holds %d tool sessions", n)
	}
	if s.Harness() != nil || !s.Asleep("alpha") || !s.Asleep("beta") {
		t.Fatalf("asleep, alpha holds its harness (%v), or isn't asleep", s.Harness() != nil)
	}
	// The next message wakes alpha alone, on the same port, and its
	// conversation goes on.
	if got := say("still there?"); got != "awake again" {
		t.Fatalf("woken, answered %q", got)
	}
	if s.Asleep("alpha") || !s.Asleep("beta") {
		t.Fatalf("alpha asleep %v, beta asleep %v", s.Asleep("alpha"), s.Asleep("beta"))
	}
	reqs := q.Requests()
	if last := reqs[len(reqs)-1]; len(last.Messages) < 4 {
		t.Fatalf("woken, the model saw %d messages of the conversation", len(last.Messages))
	}
	p, _ := store.For(home, "alpha")
	ev, err := log.Open(p.Chats()).Read(ctx, "telegram:1", 1)
	if err != nil || len(ev) < 6 {
		t.Fatalf("alpha's conversation: %d events, %v", len(ev), err)
	}
}

// chunks is an ACP client's handler writing each streamed chunk's text
// to got.
func chunks(got *strings.Builder) func(string, json.RawMessage) {
	var mu sync.Mutex
	return func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if method != acp.MethodSessionUpdate || json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || u.Content == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got.WriteString(u.Content.Text)
	}
}
