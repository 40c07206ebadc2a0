package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// BenchmarkHubOverheadLinkHarness: the hub's overhead per message over
// the agent alone, a real agent with a model: lnk-link-harness serve
// --stdio, its model the fake provider (Anthropic's wire format), the
// same program and the same fake provider both ways, on the loopback.
// Through the hub each message is a bridge's (a WebSocket of its own:
// proof, upgrade, initialize, resume, prompt) to lnk-acp, which forwards
// it over the harness's stdio; alone the same prompt goes straight to
// another lnk-link-harness over its stdio, as an editor sends it. Each
// turn is one model call whose request holds the thread's history, the
// same length both ways. It reports each one's median, their ratio and
// the difference (hub/bench_test.go's BenchmarkHubOverhead is the same
// with the scripted agent, which calls no model).
func BenchmarkHubOverheadLinkHarness(b *testing.B) {
	bin := buildLinkHarness(b)
	fake := fakeprovider.New()
	b.Cleanup(fake.Close)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "PATH": os.Getenv("PATH")}
	m, key := startCommand(b, env, bin, "serve", "--stdio", "--home", b.TempDir(), "--model", "anthropic/claude-test")
	alone := newStdioClient(b, env, bin, "serve", "--stdio", "--home", b.TempDir(), "--model", "anthropic/claude-test")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Both warmed: the harness started, the thread begun.
	message(b, ctx, m.URL(), key, "telegram:1", "hi")
	alone.prompt(b, ctx, "hi")
	var hubTimes, aloneTimes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if got := message(b, ctx, m.URL(), key, "telegram:1", "hi"); !strings.Contains(got, "hi") {
			b.Fatalf("through the hub: %q", got)
		}
		hubTimes = append(hubTimes, time.Since(start))
		start = time.Now()
		if got := alone.prompt(b, ctx, "hi"); !strings.Contains(got, "hi") {
			b.Fatalf("alone: %q", got)
		}
		aloneTimes = append(aloneTimes, time.Since(start))
	}
	b.StopTimer()
	h, a := medianOf(hubTimes), medianOf(aloneTimes)
	b.ReportMetric(float64(h.Microseconds()), "hub-µs/msg")
	b.ReportMetric(float64(a.Microseconds()), "alone-µs/msg")
	b.ReportMetric(float64(h)/float64(a), "ratio")
	b.ReportMetric(float64((h - a).Microseconds()), "overhead-µs/msg")
}

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// stdioClient is a stdio ACP agent run as an editor runs one, its
// thread telegram:1 resumed.
type stdioClient struct {
	conn *acp.Conn
	mu   sync.Mutex
	text strings.Builder // the chunks of the turn running
}

func newStdioClient(b *testing.B, env map[string]string, command ...string) *stdioClient {
	cmd := exec.Command(command[0], command[1:]...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &stdioClient{}
	c.conn = acp.NewConn(acp.NewStdio(out, in, 0), func(ctx context.Context, r *acp.Request) {
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		json.Unmarshal(r.Params, &p)
		if p.Update.Kind == acp.UpdateMessageChunk {
			c.mu.Lock()
			c.text.WriteString(p.Update.Content.Text)
			c.mu.Unlock()
		}
	})
	go c.conn.Run(context.Background())
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	ctx := context.Background()
	if _, err := c.conn.Call(ctx, acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.conn.Call(ctx, acp.MethodSessionResume, map[string]any{"sessionId": "telegram:1", "cwd": "/", "mcpServers": []any{}}); err != nil {
		b.Fatal(err)
	}
	return c
}

// prompt sends text in telegram:1 and returns the answer's text (its
// chunks, each handled before the response is read).
func (c *stdioClient) prompt(b *testing.B, ctx context.Context, text string) string {
	if _, err := c.conn.Call(ctx, acp.MethodSessionPrompt, map[string]any{"sessionId": "telegram:1", "prompt": []acp.Block{{Type: "text", Text: text}}}); err != nil {
		b.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.text.String()
	c.text.Reset()
	return s
}
