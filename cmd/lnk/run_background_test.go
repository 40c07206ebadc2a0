package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/tools/mcpserve"
)

// gatedInput gives its first line, then its second once open says so,
// then its end: an owner who writes again only after something happened.
type gatedInput struct {
	first, second string
	open          func() bool
	step          int
}

func (g *gatedInput) Read(b []byte) (int, error) {
	switch g.step {
	case 0:
		g.step++
		return copy(b, g.first), nil
	case 1:
		// Past the wait the second line goes anyway, and the test's own
		// checks say what went wrong: a reader can't fail the test.
		_ = testwait.Err(30*time.Second, "the gate to open", g.open)
		g.step++
		return copy(b, g.second), nil
	}
	return 0, io.EOF
}

// End to end through lnk agent chat, Link Harness and the fake provider:
// the model starts a command with run__start and answers at once; the
// command's end comes back to the conversation as a message from
// run:<id> (stored with its id, run.<id>), which the model is told is not
// the owner's and answers, the answer stored after it; the owner's next
// message is answered in turn. (The chat shows that answer before the
// owner's next message when the harness kept it for _link/recover;
// tools/send lets a message's connection go at _link/taken, and a turn
// that ends first answers on that connection, so whether it is kept is
// tools/send's race, not asserted here.)
func TestChatBackgroundEndAnswered(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "run__start", Input: `{"shell":"echo built ok"}`}}},
		fakeprovider.Turn{Text: "The build runs in the background."},
		fakeprovider.Turn{Text: "Your build finished: built ok."},
		fakeprovider.Turn{Text: "You're welcome."},
	)
	home, err := os.MkdirTemp("/var/tmp", "lnk-chat-runbg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	p, _ := store.For(home, "main")
	events := func() []store.Event {
		evs, _ := log.Open(p.Chats()).Read(context.Background(), "link:chat", 1)
		return evs
	}
	// The end's turn has answered: a message from run:<id>, then an
	// answer after it.
	answered := func() bool {
		from := false
		for _, e := range events() {
			if e.Kind == store.KindMessage && strings.HasPrefix(e.From, "run:") {
				from = true
			}
			if from && store.FinalAnswer(e) {
				return true
			}
		}
		return false
	}
	in := &gatedInput{first: "build it in the background\n", second: "thanks\n", open: answered}
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var out, errOut safeBuffer
	code := runChat(ctx, nil, env, in, false, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	if !strings.Contains(got, "⚙ run__start") || !strings.Contains(got, "You're welcome.") {
		t.Fatalf("the chat showed %q: %s", got, errOut.String())
	}
	var id string
	answeredEnd := false
	for _, e := range events() {
		if e.Kind == store.KindMessage && strings.HasPrefix(e.From, "run:") {
			id = strings.TrimPrefix(e.From, "run:")
			if e.MessageID != "run."+id || !strings.Contains(e.Text, "ended: exit status 0") || !strings.Contains(e.Text, "built ok") {
				t.Fatalf("the end stored as %+v", e)
			}
		}
		if id != "" && store.FinalAnswer(e) && e.Text == "Your build finished: built ok." {
			answeredEnd = true
		}
	}
	if !answeredEnd {
		t.Fatalf("no answer stored after the end from run:%s", id)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 || id == "" {
		t.Fatalf("%d requests, the end from %q", len(reqs), id)
	}
	if body := string(reqs[2].Body); !strings.Contains(body, "run:"+id) || !strings.Contains(body, "built ok") {
		t.Fatalf("the model wasn't told the end, from run:%s: %s", id, body)
	}
}

// lnk run serve on its own sends a background command's end to the
// agent's endpoint its flags name (--endpoint, --key-file): the harness
// stores it from run:<id> in the conversation that started it. Without
// an endpoint it can reach it still serves, saying the ends wait.
func TestRunServeSendsEnds(t *testing.T) {
	r := harnesstest.New(t)
	r.Model.Push(model.Response{Text: "noted"})
	home, err := os.MkdirTemp("/var/tmp", "lnk-run-serve")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	keyFile := filepath.Join(home, "rig.key")
	if err := os.WriteFile(keyFile, r.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := serveRun(t, "run", "serve", "--home", home, "--endpoint", r.URL, "--key-file", keyFile)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "start", Arguments: map[string]any{"shell": "echo done"},
		Meta: mcp.Meta{mcpserve.MetaThread: "telegram:9", mcpserve.MetaHops: 0}})
	if err != nil || res.IsError {
		t.Fatalf("run__start: %+v, %v", res, err)
	}
	testwait.For(t, 10*time.Second, "the end stored from run:<id>", func() bool {
		for _, e := range r.Events("telegram:9") {
			if e.Kind == store.KindMessage && strings.HasPrefix(e.From, "run:") && strings.Contains(e.Text, "done") && e.Hops == 1 {
				return true
			}
		}
		return false
	})
	s.Close()
	stop()

	other, err := os.MkdirTemp("/var/tmp", "lnk-run-serve")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(other)
	_, stop = serveRun(t, "run", "serve", "--home", other)
	if said := stop(); !strings.Contains(said, "background commands' ends wait in") {
		t.Fatalf("lnk run serve with no endpoint at hand said: %s", said)
	}
}
