package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/file"
)

// From a fresh home, lnk agent chat starts the file tool beside the
// agent: its calls are offered as file__<call>, a typo the model fixes by
// file__replace is fixed on disk, and the file__read after it reads the
// line back to the model.
func TestChatEditsAFile(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "file__replace", Input: `{"path":"notes/todo.md","old":"fix the tpyo","new":"fix the typo"}`}}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_2", Name: "file__read", Input: `{"path":"notes/todo.md"}`}}},
		fakeprovider.Turn{Text: "Fixed."},
	)
	home := t.TempDir()
	p, _ := store.For(home, "main")
	todo := filepath.Join(p.Files(), "notes", "todo.md")
	if err := os.MkdirAll(filepath.Dir(todo), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(todo, []byte("- fix the tpyo\n- call Ann\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	code, out, errOut := chatIn(t, env, "fix the typo in notes/todo.md\n")
	if code != 0 || !strings.Contains(out, "⚙ file__replace done\n") || !strings.Contains(out, "Fixed.") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "its file tool answers on 127.0.0.1:") || strings.Contains(errOut, "/mcp/") {
		t.Fatalf("didn't say where the file tool started, or said its secret: %s", errOut)
	}
	if b, _ := os.ReadFile(todo); string(b) != "- fix the typo\n- call Ann\n" {
		t.Fatalf("the file is %q", b)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, want := range []string{"file__find", "file__read", "file__replace", "file__write"} {
		if !slices.Contains(reqs[0].Tools, want) {
			t.Errorf("%s not offered: %v", want, reqs[0].Tools)
		}
	}
	ans := toolAnswers(t, home, "link:chat")
	if len(ans) != 2 || ans[0].IsError || !strings.HasPrefix(ans[0].Text, "Replaced in notes/todo.md at line 1") {
		t.Fatalf("replace's answer: %+v", ans)
	}
	if ans[1].IsError || ans[1].Text != "notes/todo.md, lines 1-2 of 2 (26 bytes):\n     1\t- fix the typo\n     2\t- call Ann\n" {
		t.Fatalf("read's answer: %q", ans[1].Text)
	}
	if !strings.Contains(reqs[2].System, file.Instructions) {
		t.Fatal("the tools section lacks the file tool's instructions")
	}
}

// lnk file serve, a process of its own: it prints its address, whose
// secret is kept 0600 in the agent's file/secret, answers there alone,
// serves the workspace made for it, and holds itself by Landlock to it.
func TestFileServe(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "file", "serve", "--home", home)
	cmd.Env = append(os.Environ(), envMeasureRunLnk+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // none left if the test dies
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel() // kills it
		cmd.Wait()
	}()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	p, _ := store.For(home, "main")
	secret, err := os.Stat(p.ToolSecret("file"))
	if err != nil || secret.Mode().Perm() != 0o600 {
		t.Fatalf("the secret file: %v %v", secret, err)
	}
	if !strings.Contains(url, "/mcp/") {
		t.Fatalf("printed %q", url)
	}
	res, err := http.Get(url[:strings.LastIndex(url, "/")+1] + "guess")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("another path answered %d", res.StatusCode)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": "hello.md", "content": "hi\n"}})
	if err != nil || r.IsError {
		t.Fatalf("write: %v %+v", err, r)
	}
	if b, _ := os.ReadFile(filepath.Join(p.Files(), "hello.md")); string(b) != "hi\n" {
		t.Fatalf("hello.md is %q", b)
	}
	// Landlock is entered with no_new_privs set, which the kernel shows.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "\nNoNewPrivs:\t1\n") {
		t.Fatalf("lnk file serve didn't confine itself:\n%s", status)
	}
	rss, err := proctest.Status(cmd.Process.Pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lnk file serve's memory, after a call: %.1f MB", float64(rss)/(1<<20))
}
