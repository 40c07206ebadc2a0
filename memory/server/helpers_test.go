package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/memory/fts"
	"github.com/lnk-dev/link/memory/server"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/tools/mcpserve/mcptest"
)

// helperEnv makes the test binary a memory server of the home it names,
// printing its URL: a process of its own, for the tests of two processes
// and of a kill.
const helperEnv = "LNK_MEMORY_TEST_HOME"

func TestMain(m *testing.M) {
	if home := os.Getenv(helperEnv); home != "" {
		os.Exit(serveHelper(home))
	}
	os.Exit(m.Run())
}

func serveHelper(home string) int {
	ctx := context.Background()
	p, err := store.For(home, "main")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m, err := open(ctx, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := server.Start(ctx, server.Handler(m, server.Options{}), "127.0.0.1:0", server.NewSecret())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(r.URL())
	select {} // until killed
}

// open is the memory of the agent at p, as lnk memory serve opens it.
func open(ctx context.Context, p store.Paths) (*memory.Memory, error) {
	if err := os.MkdirAll(filepath.Join(p.Root, "memory"), 0o700); err != nil {
		return nil, err
	}
	idx, err := fts.Open(ctx, filepath.Join(p.Root, "memory", "index.sqlite"))
	if err != nil {
		return nil, err
	}
	r, err := router.New(p, log.Name, map[string]store.Conversations{log.Name: log.Open(p.Chats()), compact.Name: compact.Open(p.Chats())})
	if err != nil {
		return nil, err
	}
	return memory.New(memory.Config{Paths: p, Index: idx, Conversations: r})
}

// serve is a memory server in this process over a new home, and its
// agent's paths.
func serve(tb testing.TB) (string, store.Paths) {
	tb.Helper()
	p, err := store.For(tb.TempDir(), "main")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := open(context.Background(), p)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := server.Start(context.Background(), server.Handler(m, server.Options{}), "127.0.0.1:0", server.NewSecret())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		r.Close()
		m.Close()
	})
	return r.URL(), p
}

// connect is a go-sdk client's session with the server at url.
func connect(tb testing.TB, url string) *mcp.ClientSession { return mcptest.Connect(tb, url) }

// call makes a call, answering its text and whether it failed.
func call(tb testing.TB, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	tb.Helper()
	return mcptest.Call(tb, s, name, args, nil)
}

// ok makes a call that must succeed.
func ok(tb testing.TB, s *mcp.ClientSession, name string, args map[string]any) string {
	tb.Helper()
	text, failed := call(tb, s, name, args)
	if failed {
		tb.Fatalf("%s %v: %s", name, args, text)
	}
	return text
}

func write(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// rememberParams are a remember call's.
func rememberParams(note string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"note": note}}
}
