package run_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/mcpserve/mcptest"
	"github.com/lnk-dev/link/tools/run"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/sandbox"
)

// helperEnv makes the test binary a run server of the home it names,
// printing its URL: a process of its own, for the test of its kill.
const helperEnv = "LNK_RUN_TEST_HOME"

func TestMain(m *testing.M) {
	if sandbox.IsTrampoline(os.Args) {
		os.Exit(sandbox.Main())
	}
	if background.IsSupervisor(os.Args) {
		os.Exit(background.Supervise(os.Args, sandbox.Stored))
	}
	if home := os.Getenv(backgroundEnv); home != "" {
		os.Exit(serveBackgroundHelper(home))
	}
	if home := os.Getenv(helperEnv); home != "" {
		os.Exit(serveHelper(home))
	}
	os.Exit(m.Run())
}

func serveHelper(home string) int {
	p, err := store.For(home, "main")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := run.Options{Paths: p}
	r, err := run.Tool.Start(context.Background(), run.Handler(run.New(opts), opts), "127.0.0.1:0", mcpserve.NewSecret())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(r.URL())
	select {} // until killed
}

// newHome is a new home (under /var/tmp, outside the /tmp each call has
// of its own) with its agent's workspace, and config as its config.json
// (a config.json's text, or none).
func newHome(tb testing.TB, config string) store.Paths {
	tb.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "lnk-run-test")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	p, err := store.For(dir, "main")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(p.Files(), 0o700); err != nil {
		tb.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(p.Config(), []byte(config), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// serve is a run server in this process over a new home (newHome).
func serve(tb testing.TB, config string) (string, store.Paths) {
	tb.Helper()
	p := newHome(tb, config)
	opts := run.Options{Paths: p}
	r, err := run.Tool.Start(context.Background(), run.Handler(run.New(opts), opts), "127.0.0.1:0", mcpserve.NewSecret())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r.URL(), p
}

// connect is a go-sdk client's session with the server at url.
func connect(tb testing.TB, url string) *mcp.ClientSession { return mcptest.Connect(tb, url) }

// call makes a run__command call, answering its text and whether it
// failed.
func call(tb testing.TB, s *mcp.ClientSession, args map[string]any) (string, bool) {
	tb.Helper()
	return mcptest.Call(tb, s, "command", args, nil)
}

// running counts the processes whose command line holds marker.
func running(marker string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			n++
		}
	}
	return n
}

// gone waits, up to 10 s, for no process to hold marker: the kernel ends
// a pid namespace's processes as its first one ends, not at once.
func gone(tb testing.TB, marker string) {
	tb.Helper()
	testwait.For(tb, 10*time.Second, "no process of "+marker+" left behind", func() bool { return running(marker) == 0 })
}

// startHelper starts the test binary as a run server of a new home, its
// URL read from its first line.
func startHelper(tb testing.TB) (*exec.Cmd, string) {
	tb.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "lnk-run-test")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return cmd, strings.TrimSpace(line)
}
