package mcptools

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp/acptest"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
)

// everythingDir holds the MCP project's reference server, installed by
// .ci/run (npm ci --prefix harness/mcptools/testdata/everything).
const everythingDir = "testdata/everything"

// startEverything runs @modelcontextprotocol/server-everything over
// Streamable HTTP on a free loopback port, answering its address.
func startEverything(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		acptest.Missing(t, "node is not installed")
	}
	entry := everythingDir + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	if _, err := os.Stat(entry); err != nil {
		acptest.Missing(t, "server-everything is not installed: npm ci --prefix harness/mcptools/testdata/everything")
	}
	for try := 0; ; try++ {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, node, entry, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cancel()
			cmd.Wait()
		})
		listening := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "listening on port") {
					listening <- true
					break
				}
			}
			for sc.Scan() {
			}
			listening <- false
		}()
		select {
		case ok := <-listening:
			if ok {
				return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
			}
		case <-time.After(30 * time.Second):
			t.Fatal("server-everything didn't start in 30 s")
		}
		if try == 2 {
			t.Fatal("server-everything didn't start: its port was taken three times")
		}
		cancel()
	}
}

// freePort is a loopback port free now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A third party's server, the TypeScript SDK's: listed in order of
// name, its instructions kept, called with Link's _meta, its session
// ended with the turn.
func TestEverything(t *testing.T) {
	addr := startEverything(t)
	e := &env{vars: map[string]string{"LNK_TOOL_EVERYTHING": addr}}
	home := t.TempDir()
	tt := newTools(t, home, e)
	ctx := testCtx(t)
	offer, err := tt.Offer(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := names(offer)
	if len(got) < 3 || !contains(got, "everything__echo") || !contains(got, "everything__get-sum") {
		t.Fatalf("offered %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("not in order of name: %v", got)
		}
	}
	if words := joined(tt.Instructions(agent, offer)); !strings.HasPrefix(words, "## everything\n\n") || len(words) > len("## everything\n\n")+MaxInstructions {
		t.Fatalf("instructions: %q", words)
	}
	meta := contract.CallMeta{Thread: "telegram:7", Hops: 1, Model: "ollama/qwen3:8b"}
	text, failed := tt.Call(ctx, agent, model.ToolCall{ID: "1", Name: "everything__echo", Input: `{"message":"hello from Link"}`}, meta)
	if failed || text != "Echo: hello from Link" {
		t.Fatalf("echo: %q, %v", text, failed)
	}
	text, failed = tt.Call(ctx, agent, model.ToolCall{ID: "2", Name: "everything__get-sum", Input: `{"a":2,"b":40}`}, meta)
	if failed || !strings.Contains(text, "42") {
		t.Fatalf("get-sum: %q, %v", text, failed)
	}
	// Arguments its schema refuses: the server's answer, an error.
	text, failed = tt.Call(ctx, agent, model.ToolCall{ID: "3", Name: "everything__get-sum", Input: `{"a":"two"}`}, meta)
	if !failed || text == "" {
		t.Fatalf("bad arguments: %q, %v", text, failed)
	}
	tt.EndThreadTurn(ctx, agent, "telegram:7")
	// A second process lists it again to the same bytes.
	restarted := newTools(t, home, &env{vars: map[string]string{"LNK_TOOL_EVERYTHING": addr}})
	again, err := restarted.Offer(ctx, agent, nil)
	if err != nil || !sameJSON(t, offer, again) {
		t.Fatalf("a second process offered differently (%v)", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
