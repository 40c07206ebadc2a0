package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/internal/stdioagent"
)

// syncBuffer is a log's bytes, written from the hub's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// memorySecret stands for Link Memory's secret in its URL's path.
const memorySecret = "q5Zt0cR1n8w-Vx3kLmP2sYb7HdJf9GaUeQoT4iNlE6c"

// TestAgentErrorScrubbed: an agent's error quoting the MCP URL it was
// given (its path the tool's secret) reaches the hub's log with the
// address taken out, the error's code and the rest of its message kept.
func TestAgentErrorScrubbed(t *testing.T) {
	memURL := "http://127.0.0.1:9/mcp/" + memorySecret
	var log syncBuffer
	r := newRig(t, []string{envCaps + "=resume,load,mcp", stdioagent.EnvQuoteMCP + "=1"}, func(c *Config) {
		c.Tools = []Tool{{Name: "memory", URL: memURL}}
		c.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.restart()
	if got := r.message(ctx, "telegram:1", "history", nil).must(t); got != `history: "one"` {
		t.Fatalf("after a refused resume, loaded: %q", got)
	}
	r.close()
	out := log.String()
	if !strings.Contains(out, "harness could not take up a session") || !strings.Contains(out, `err="json-rpc error -32603: resume refused: MCP server memory at <address> did not answer"`) {
		t.Fatalf("the agent's error wasn't logged whole, scrubbed:\n%s", out)
	}
	if strings.Contains(out, memorySecret) {
		t.Fatalf("the log holds the secret:\n%s", out)
	}
}

// TestAgentErrorToldScrubbed: an agent's error quoting the MCP URL it
// was given, in its message and its data, reaches the bridge with the
// address taken out, its code and the rest kept (before, the bridge was
// told the secret).
func TestAgentErrorToldScrubbed(t *testing.T) {
	memURL := "http://127.0.0.1:9/mcp/" + memorySecret
	r := newRig(t, []string{envCaps + "=resume,load,mcp"}, func(c *Config) {
		c.Tools = []Tool{{Name: "memory", URL: memURL}}
	})
	ctx := testCtx(t, 30*time.Second)
	e := r.message(ctx, "telegram:1", "failmcp", nil)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) {
		t.Fatalf("the failed prompt was answered %v, want the agent's error", e.err)
	}
	if want := "prompt failed: MCP memory=<address> did not answer"; rpcErr.Code != -32603 || rpcErr.Message != want {
		t.Errorf("the bridge was told %d %q, want -32603 %q", rpcErr.Code, rpcErr.Message, want)
	}
	var data struct{ Servers []string }
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Servers) != 1 || data.Servers[0] != "memory=<address>" {
		t.Errorf("the bridge was told data %s (%v), want the servers memory=<address>", rpcErr.Data, err)
	}
	if strings.Contains(rpcErr.Error()+string(rpcErr.Data), memorySecret) {
		t.Fatalf("the bridge was told the secret: %v %s", rpcErr, rpcErr.Data)
	}
}

// The hub's logger takes its tools' addresses out of a record's
// message, strings, errors, Stringers, bytes, groups and the attributes
// given beforehand, a quote with its slashes escaped too, and keeps the
// rest.
func TestScrubbedLogger(t *testing.T) {
	var b bytes.Buffer
	memURL := "http://127.0.0.1:9/mcp/" + memorySecret
	logger := scrubbed(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), addresses([]Tool{{Name: "memory", URL: memURL}, {Name: "web", URL: ""}}))
	logger = logger.With("given", "at "+memURL)
	logger.Debug("harness stderr "+memURL, "line", `{"url":"http:\/\/127.0.0.1:9\/mcp\/`+memorySecret+`"}`,
		"err", errors.New("dial "+memURL+": refused"), "raw", []byte(memURL), "n", 7,
		slog.Group("g", "inner", memorySecret), "when", time.Duration(3))
	out := b.String()
	if strings.Contains(out, memorySecret) {
		t.Fatalf("the secret was logged:\n%s", out)
	}
	for _, want := range []string{`msg="harness stderr <address>"`, `given="at <address>"`, `err="dial <address>: refused"`, "raw=<address>", "n=7", "g.inner=<address>", "when=3ns", `\\/mcp\\/<address>`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %s:\n%s", want, out)
		}
	}
	if l := slog.Default(); scrubbed(l, nil) != l {
		t.Error("a hub with no tools has its logger wrapped")
	}
}
