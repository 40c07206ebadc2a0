package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// threadRecorder is the kit's recording model, read from what the fake
// provider was sent: Link Harness names no thread to its model, so a call
// is the thread's when it holds the kit's words for that thread's check
// (its meta checks' messages say conformance-<kind>-<run>-<check>). The
// tools-narrow check, whose messages all say the same, is not given it.
type threadRecorder struct{ fake *fakeprovider.Server }

func (r threadRecorder) Seen(ctx context.Context, thread string) ([]conformance.ModelCall, error) {
	rest := strings.TrimPrefix(thread, "link:conformance-")
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		rest = rest[:i] // <run>-<check>
	}
	var out []conformance.ModelCall
	for _, req := range r.fake.Requests() {
		if req.API != "" && strings.Contains(string(req.Body), "-"+rest) {
			out = append(out, conformance.ModelCall{Text: string(req.Body), Tools: req.Tools})
		}
	}
	return out, nil
}

// The words the kit's model acts on, through the fake provider.
const (
	kitToolPrompt    = "conformance: call memory__search"
	kitRecoverPrompt = "conformance: answer once the caller has gone"
)

// linkHarness is lnk-link-harness built once for the test binary, in a
// folder of its own that TestMain removes, by the first test that asks
// (buildLinkHarness).
var linkHarness struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildLinkHarness is lnk-link-harness, built at the first call of the
// test binary's.
func buildLinkHarness(t testing.TB) string {
	t.Helper()
	linkHarness.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if linkHarness.dir, linkHarness.err = os.MkdirTemp("", "lnk-acp-test-"); linkHarness.err != nil {
			return
		}
		bin := filepath.Join(linkHarness.dir, "lnk-link-harness")
		if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/lnk-dev/link/cmd/lnk-link-harness").CombinedOutput(); err != nil {
			linkHarness.err = fmt.Errorf("build lnk-link-harness: %v\n%s", err, out)
			return
		}
		linkHarness.bin = bin
	})
	if linkHarness.err != nil {
		t.Fatal(linkHarness.err)
	}
	return linkHarness.bin
}

// TestLinkHarnessBehindHub: lnk-acp serving lnk-link-harness serve
// --stdio (a real program, its model the fake provider over Anthropic's
// wire format, its memory a real MCP server) passes the conformance kit:
// every check but tools-narrow (see threadRecorder) and the two routing
// checks of an endpoint answering for several owners' agents.
func TestLinkHarnessBehindHub(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lnk-link-harness")
	}
	bin := buildLinkHarness(t)

	memory := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	memory.AddTool(&mcp.Tool{Name: "search", Description: "search notes", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no notes"}}}, nil
		})
	memorySrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return memory }, nil))
	defer memorySrv.Close()

	// The fake provider answers every request with what it was told; the
	// kit's tool message gets a call of memory__search (once), and its
	// recover message an answer only after its caller went.
	fake := fakeprovider.New()
	defer fake.Close()
	kit := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch {
		case bytes.Contains(body, []byte(kitToolPrompt)) && !bytes.Contains(body, []byte(`"tool_result"`)):
			fake.Script(fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_kit", Name: "memory__search", Input: `{"query":"x"}`}}})
		case bytes.Contains(body, []byte(kitRecoverPrompt)):
			// The model answers after the kit's caller has gone and
			// lnk-acp and the harness have seen it go, which nothing
			// outside them shows: a pause, the model's slowness that
			// the check needs, not a wait for work.
			time.Sleep(700 * time.Millisecond)
		}
		fake.ServeHTTP(w, r)
	}))
	defer kit.Close()

	home := t.TempDir()
	env := map[string]string{
		"ANTHROPIC_API_KEY":  "k",
		"ANTHROPIC_BASE_URL": kit.URL,
		"LNK_MEMORY":         memorySrv.URL,
		"PATH":               os.Getenv("PATH"),
	}
	m, key := startCommand(t, env, bin, "serve", "--stdio", "--home", home, "--model", "anthropic/claude-test")
	conformance.Run(t, conformance.Target{
		URL:      m.URL(),
		Key:      key,
		Agent:    "main",
		Nameless: true,
		PID:      os.Getpid(),
		ToolCall: &conformance.ToolCall{Prompt: kitToolPrompt, Tool: "memory__search"},
		Model:    threadRecorder{fake},
		Recover:  &conformance.Recover{Prompt: kitRecoverPrompt},
		Timeout:  30 * time.Second,
	})
}
