package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/run"
	"github.com/lnk-dev/link/tools/run/background"
)

// teller keeps the ends it is told.
type teller struct {
	told chan background.Message
}

func (t *teller) Tell(_ context.Context, m background.Message) error {
	t.told <- m
	return nil
}

func (t *teller) next(tb testing.TB) background.Message {
	tb.Helper()
	select {
	case m := <-t.told:
		return m
	case <-time.After(20 * time.Second):
		tb.Fatal("no end told in 20 s")
		return background.Message{}
	}
}

// serveBackground is a run server in this process with background
// commands, over a new home with config, telling ends to the teller
// answered.
func serveBackground(tb testing.TB, config string) (*mcp.ClientSession, store.Paths, *teller) {
	tb.Helper()
	p := newHome(tb, config)
	tl := &teller{told: make(chan background.Message, 100)}
	m, err := background.Open(background.Options{Dir: filepath.Join(p.Root, "run"), Teller: tl, Poll: 50 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	opts := run.Options{Paths: p, Background: m}
	r, err := run.Tool.Start(context.Background(), run.Handler(run.New(opts), opts), "127.0.0.1:0", mcpserve.NewSecret())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		r.Close()
		all, _ := m.List()
		for _, in := range all {
			if in.Status == background.Running {
				m.Stop(context.Background(), in.ID)
			}
		}
		m.Close()
	})
	return connect(tb, r.URL()), p, tl
}

// callIn makes call name with args in conversation thread (none: no
// _meta), answering its text and whether it failed.
func callIn(tb testing.TB, s *mcp.ClientSession, thread, name string, args map[string]any) (string, bool) {
	tb.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if thread != "" {
		params.Meta = mcp.Meta{mcpserve.MetaThread: thread, mcpserve.MetaHops: 1}
	}
	res, err := s.CallTool(context.Background(), params)
	if err != nil {
		tb.Fatalf("%s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), res.IsError
}

// idOf is the id run__start's answer names.
func idOf(tb testing.TB, started string) string {
	tb.Helper()
	rest, ok := strings.CutPrefix(started, "Started run:")
	if !ok || len(rest) < 8 {
		tb.Fatalf("run__start answered %q", started)
	}
	return rest[:8]
}

// run__start runs a command in the background, in the sandbox over the
// workspace as run__command does; its end is told to the conversation
// the call was made in, with the hops of the message it answered; list,
// read and stop see it, and a stop ends every process of it.
func TestBackgroundCalls(t *testing.T) {
	s, p, tl := serveBackground(t, "")
	if err := os.WriteFile(p.Config(), []byte(`{"run":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	text, failed := callIn(t, s, "telegram:42", "start", map[string]any{"shell": "pwd; cat ../config.json; echo done"})
	if failed {
		t.Fatalf("start: %s", text)
	}
	id := idOf(t, text)
	msg := tl.next(t)
	if msg.ID != id || msg.Thread != "telegram:42" || msg.Hops != 1 {
		t.Fatalf("told %+v, want %s in telegram:42 at hops 1", msg, id)
	}
	// The config outside the workspace is refused by the kernel
	// (Landlock), not found missing.
	if !strings.Contains(msg.Text, p.Files()+"\n") || !strings.Contains(msg.Text, "cat: ../config.json: Permission denied\ndone\n") {
		t.Fatalf("the command wasn't in the sandbox over the workspace (or read the config outside it):\n%s", msg.Text)
	}
	if text, _ := callIn(t, s, "telegram:42", "read", map[string]any{"id": id, "limit": 5}); !strings.Contains(text, "bytes 0 to 5 of ") || !strings.HasSuffix(text, ":\n"+p.Files()[:5]) {
		t.Fatalf("read: %q", text)
	}

	text, _ = callIn(t, s, "link:chat", "start", map[string]any{"command": []string{"sh", "-c", "echo $$; sleep 1000 & sleep 1000"}})
	long := idOf(t, text)
	text, _ = callIn(t, s, "telegram:42", "list", nil)
	for _, want := range []string{"2 background commands, 1 running", "- " + long + " running for ", "(started in another conversation)", "- " + id + " ended "} {
		if !strings.Contains(text, want) {
			t.Errorf("list lacks %q:\n%s", want, text)
		}
	}
	text, failed = callIn(t, s, "link:chat", "stop", map[string]any{"id": long})
	if failed || !strings.HasPrefix(text, "Stopped run:"+long+", every process of it: ") {
		t.Fatalf("stop: %q", text)
	}
	gone(t, "sleep 1000")
}

// Bad input to the background calls is refused naming the rule: a start
// with no conversation (a call not made through Link Harness), without a
// command, past the agent's bound of commands running; a read of no such
// command or past its limit. A command as long as the kernel takes runs.
func TestBackgroundRefused(t *testing.T) {
	s, _, tl := serveBackground(t, `{"run": {"background": {"max_running": 1}}}`)
	for _, c := range []struct {
		thread, name string
		args         map[string]any
		want         string
	}{
		{"", "start", map[string]any{"shell": "true"}, "names no conversation"},
		{"link:chat", "start", map[string]any{}, "say a command"},
		{"link:chat", "read", map[string]any{"id": "../../secret"}, "not a background command's id"},
		{"link:chat", "read", map[string]any{"id": "abcd2345"}, "no background command abcd2345"},
		{"link:chat", "read", map[string]any{"id": "abcd2345", "limit": 1 << 20}, "limit is 1 to 65536 bytes"},
		{"link:chat", "stop", map[string]any{"id": "x"}, "not a background command's id"},
	} {
		text, failed := callIn(t, s, c.thread, c.name, c.args)
		if !failed || !strings.HasPrefix(text, "Refused: ") || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: %v %q, want %q", c.name, c.args, failed, text, c.want)
		}
	}
	// A shell line as long as the kernel takes one argument (128 KiB)
	// runs, and is said back cut.
	long := "echo long #" + strings.Repeat("x", 127<<10)
	text, failed := callIn(t, s, "link:chat", "start", map[string]any{"shell": long})
	if failed || len(text) > 2000 {
		t.Fatalf("a start of a 127 KiB shell line: %v, %d bytes: %.200s", failed, len(text), text)
	}
	if msg := tl.next(t); !strings.Contains(msg.Text, "exit status 0") || !strings.Contains(msg.Text, "long\n") || len(msg.Text) > 4000 {
		t.Fatalf("the end of a 127 KiB shell line, %d bytes: %.100s ... %s", len(msg.Text), msg.Text, msg.Text[len(msg.Text)-120:])
	}
	callIn(t, s, "link:chat", "start", map[string]any{"command": []string{"sleep", "1000"}})
	if text, failed := callIn(t, s, "link:chat", "start", map[string]any{"command": []string{"sleep", "1000"}}); !failed || !strings.Contains(text, "1 of 1 at once") {
		t.Fatalf("a start past max_running: %v %q", failed, text)
	}
	if text, failed := callIn(t, s, "", "list", nil); failed || !strings.Contains(text, "1 running") {
		t.Fatalf("list: %v %q", failed, text)
	}
}

// BenchmarkBackgroundStartTold: a background command's life as the
// model sees it through run's server, sandboxed: run__start of true
// answered, then its end told.
func BenchmarkBackgroundStartTold(b *testing.B) {
	s, _, tl := serveBackground(b, "")
	for b.Loop() {
		if text, failed := callIn(b, s, "link:chat", "start", map[string]any{"command": []string{"true"}}); failed {
			b.Fatal(text)
		}
		tl.next(b)
	}
}
