package hub

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
)

// BenchmarkHubOverhead: one message through the hub (a WebSocket of its
// own: proof, upgrade, initialize, resume, prompt) beside the same prompt
// sent to the same scripted agent alone over its stdio, which answers at
// once. It reports each one's median and their ratio, and the hub's
// overhead (the difference of the medians).
func BenchmarkHubOverhead(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	alone := newAlone(b)
	var hubTimes, aloneTimes []time.Duration
	// Both warmed: the harness started, the session made.
	r.message(ctx, "telegram:1", "hi", nil)
	alone.prompt(ctx, "hi")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		e := r.message(ctx, "telegram:1", "hi", nil)
		if e.err != nil || e.chunks() != "echo: hi" {
			b.Fatalf("through the hub: %v %q", e.err, e.chunks())
		}
		hubTimes = append(hubTimes, time.Since(start))
		start = time.Now()
		if got := alone.prompt(ctx, "hi"); got != "echo: hi" {
			b.Fatalf("alone: %q", got)
		}
		aloneTimes = append(aloneTimes, time.Since(start))
	}
	b.StopTimer()
	h, a := median(hubTimes), median(aloneTimes)
	b.ReportMetric(float64(h.Microseconds()), "hub-µs/msg")
	b.ReportMetric(float64(a.Microseconds()), "alone-µs/msg")
	b.ReportMetric(float64(h)/float64(a), "ratio")
	b.ReportMetric(float64((h - a).Microseconds()), "overhead-µs/msg")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// newBenchRig is newRig for a benchmark.
func newBenchRig(b *testing.B) *rig {
	state := b.TempDir()
	cfg := Config{
		Command:  agentCommand(),
		Env:      append(os.Environ(), "HUB_TEST_ROLE=agent", envState+"="+state),
		Dir:      state,
		Sessions: b.TempDir() + "/sessions.json",
	}
	r := &rig{t: b, cfg: cfg, state: state, key: []byte("hub-test-key-0123456789")}
	r.start()
	b.Cleanup(r.close)
	return r
}

// alone is the scripted agent over its own stdio, one session, as a
// client that runs it would.
type alone struct {
	conn    *acp.Conn
	session string
	text    chan string
}

func newAlone(b *testing.B) *alone {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HUB_TEST_ROLE=agent", envState+"="+b.TempDir())
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	a := &alone{text: make(chan string, 16)}
	a.conn = acp.NewConn(acp.NewStdio(out, in, 0), func(ctx context.Context, r *acp.Request) {
		var p struct {
			Update struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		json.Unmarshal(r.Params, &p)
		if p.Update.Content.Text != "" {
			a.text <- p.Update.Content.Text
		}
	})
	go a.conn.Run(context.Background())
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	ctx := context.Background()
	if _, err := a.conn.Call(ctx, acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		b.Fatal(err)
	}
	raw, err := a.conn.Call(ctx, acp.MethodSessionNew, map[string]any{"cwd": "/", "mcpServers": []any{}})
	if err != nil {
		b.Fatal(err)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(raw, &s)
	a.session = s.SessionID
	return a
}

// prompt sends text and returns the answer's text.
func (a *alone) prompt(ctx context.Context, text string) string {
	if _, err := a.conn.Call(ctx, acp.MethodSessionPrompt, map[string]any{"sessionId": a.session, "prompt": []acp.Block{{Type: "text", Text: text}}}); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for {
		select {
		case s := <-a.text:
			b.WriteString(s)
		default:
			return b.String()
		}
	}
}
