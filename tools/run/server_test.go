package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/internal/testwait"
)

// run__command runs a program with its arguments, and a shell line, in
// the workspace; says the exit status, stdout and stderr; a failing one
// is an error answer with its status.
func TestCommand(t *testing.T) {
	url, p := serve(t, "")
	s := connect(t, url)
	if err := os.WriteFile(filepath.Join(p.Files(), "notes.txt"), []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, failed := call(t, s, map[string]any{"command": []string{"wc", "-l", "notes.txt"}})
	if failed || !strings.HasPrefix(text, "Exit status 0 after ") || !strings.Contains(text, "stdout:\n2 notes.txt\n") {
		t.Fatalf("wc: %v %q", failed, text)
	}
	text, failed = call(t, s, map[string]any{"shell": "pwd; echo oops >&2; exit 3"})
	if !failed || !strings.HasPrefix(text, "Exit status 3 after ") || !strings.Contains(text, "stdout:\n"+p.Files()+"\n") || !strings.Contains(text, "stderr:\noops\n") {
		t.Fatalf("shell: %v %q", failed, text)
	}
	text, failed = call(t, s, map[string]any{"command": []string{"no-such-program-here"}})
	if !failed || !strings.Contains(text, "Exit status 127") || !strings.Contains(text, "no such program") {
		t.Fatalf("no program: %v %q", failed, text)
	}
}

// Bad input is refused naming the rule, and the server still serves.
func TestBadInput(t *testing.T) {
	url, _ := serve(t, `{"run": {"max_timeout": 60}}`)
	s := connect(t, url)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "say a command"},
		{map[string]any{"command": []string{"ls"}, "shell": "ls"}, "not both"},
		{map[string]any{"command": []string{"cat", "a\x00b"}}, "NUL"},
		{map[string]any{"shell": "cat a\x00b"}, "NUL"},
		{map[string]any{"shell": "true", "timeout": 61}, "past the agent's ceiling, 60 s"},
		{map[string]any{"shell": strings.Repeat("x", 300<<10)}, "past the 131071 the kernel gives a program in one"},
		{map[string]any{"shell": ": " + strings.Repeat("x", 128<<10)}, "past the 131071 the kernel gives a program in one"},
		{map[string]any{"command": []string{"true", strings.Repeat("x", 100<<10), strings.Repeat("y", 100<<10), strings.Repeat("z", 100<<10)}}, "past the 262144 a call may send"},
	} {
		text, failed := call(t, s, c.args)
		if !failed || !strings.HasPrefix(text, "Refused: ") || !strings.Contains(text, c.want) {
			t.Errorf("%v: %v %q (want %q)", c.args, failed, text, c.want)
		}
	}
	if text, failed := call(t, s, map[string]any{"shell": "echo still"}); failed || !strings.Contains(text, "still") {
		t.Fatalf("after: %q", text)
	}
	// A shell line of the kernel's most for one argument runs.
	if text, failed := call(t, s, map[string]any{"shell": ": " + strings.Repeat("x", 128<<10-1-2-len("\necho longest")) + "\necho longest"}); failed || !strings.Contains(text, "longest") {
		t.Fatalf("the longest shell line: %v %.200q", failed, text)
	}
	url, _ = serve(t, `{"run": {"timeout": 30, "shell": "bash"}}`)
	if text, failed := call(t, connect(t, url), map[string]any{"shell": "true"}); !failed || !strings.Contains(text, `unknown field "shell"`) {
		t.Fatalf("an unknown key: %q", text)
	}
}

// An endless output (yes | head -c 100M) is answered within its cap,
// head and tail, saying how much was cut.
func TestEndlessOutput(t *testing.T) {
	url, _ := serve(t, "")
	s := connect(t, url)
	text, failed := call(t, s, map[string]any{"shell": "yes | head -c 100M", "timeout": 120})
	if failed || len(text) > 32<<10+1024 {
		t.Fatalf("answer of %d bytes, failed %v", len(text), failed)
	}
	if !strings.Contains(text, "bytes cut (of 104857600)") || !strings.HasPrefix(strings.SplitN(text, "stdout:\n", 2)[1], "y\ny\n") {
		t.Fatalf("what was cut isn't said:\n%s", text[:300])
	}
}

// A command that never ends is killed at its timeout with everything it
// started; a fork bomb hits its namespace's bound on tasks and fails to
// fork, or is killed at its timeout; nothing of either is left, and the
// server still serves.
func TestKilledAtTimeout(t *testing.T) {
	url, _ := serve(t, `{"run": {"limits": {"processes": 64}}}`)
	s := connect(t, url)
	text, failed := call(t, s, map[string]any{"shell": "sleep 987651 & sleep 987652", "timeout": 1})
	if !failed || !strings.HasPrefix(text, "Killed at its timeout, 1s") {
		t.Fatalf("never ends: %q", text)
	}
	gone(t, "987651")
	gone(t, "987652")

	// The bomb fills its namespace's tasks (its pid_max) and its shell
	// can't fork its sleep then, or it runs to its timeout: either way it
	// is answered, and ended whole.
	text, failed = call(t, s, map[string]any{"shell": "bomb() { bomb | bomb & }; bomb; sleep 987653", "timeout": 3})
	if !failed || !strings.HasPrefix(text, "Killed at its timeout, 3s") && !strings.Contains(text, "Cannot fork") {
		t.Fatalf("fork bomb: %.300q", text)
	}
	gone(t, "987653")
	if text, failed := call(t, s, map[string]any{"shell": "echo still"}); failed || !strings.Contains(text, "still") {
		t.Fatalf("after: %q", text)
	}
}

// A file past the file size limit is refused by the kernel (SIGXFSZ,
// "File too large").
func TestFileSizeLimit(t *testing.T) {
	url, p := serve(t, `{"run": {"limits": {"file_size": 1048576}}}`)
	text, failed := call(t, connect(t, url), map[string]any{"shell": "head -c 2M /dev/zero > big"})
	if !failed || !strings.Contains(text, "File too large") && !strings.Contains(text, "signal 25") {
		t.Fatalf("%q", text)
	}
	if fi, err := os.Stat(filepath.Join(p.Files(), "big")); err != nil || fi.Size() > 1<<20 {
		t.Fatalf("the file: %v %v", fi, err)
	}
}

// env run through run__command shows no model key and no LNK_ address
// of the server's environment.
func TestEnvNoSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret-key")
	t.Setenv("OPENAI_API_KEY", "sk-openai-secret")
	t.Setenv("LNK_MEMORY", "http://127.0.0.1:9/mcp/secretsecret")
	url, p := serve(t, `{"run": {"env": {"GOFLAGS": "-mod=mod"}}}`)
	text, failed := call(t, connect(t, url), map[string]any{"command": []string{"env"}})
	if failed {
		t.Fatal(text)
	}
	for _, bad := range []string{"secret", "LNK_", "API_KEY"} {
		if strings.Contains(text, bad) {
			t.Fatalf("env shows %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{"GOFLAGS=-mod=mod", "HOME=" + p.Files(), "PATH=/usr/local/sbin:"} {
		if !strings.Contains(text, want) {
			t.Fatalf("env lacks %q:\n%s", want, text)
		}
	}
}

// The run server killed with SIGKILL mid-command leaves no process of
// the command behind (Pdeathsig ends the trampoline, the pid namespace
// the rest).
func TestServerKilledMidCommand(t *testing.T) {
	cmd, url := startHelper(t)
	s := connect(t, url)
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "command", Arguments: map[string]any{"shell": "sleep 987654 & sleep 987655"}})
		done <- err
	}()
	testwait.For(t, 10*time.Second, "the command to start", func() bool { return running("987655") > 0 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	gone(t, "987654")
	gone(t, "987655")
	if err := <-done; err == nil {
		t.Fatal("a call answered by a server killed before the command ended")
	}
}

// Each escape through run__command is refused by the kernel, as the
// command's own tools say it (cat's, sh's, kill's words for EACCES,
// ENETUNREACH...), and the server serves the next call: the agent's
// settings and key beside the workspace, /etc/shadow through a link
// from the workspace (even as root), a write outside the workspace, a
// TCP connect to the server's own port with the network off, kill -9 -1.
func TestEscapesThroughServer(t *testing.T) {
	url, p := serve(t, `{"run": {"timeout": 10}}`)
	s := connect(t, url)
	if err := os.WriteFile(filepath.Join(p.Root, "endpoint.key"), []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(p.Files(), "shadow")); err != nil {
		t.Fatal(err)
	}
	port := strings.Split(strings.TrimPrefix(url, "http://127.0.0.1:"), "/")[0]
	for _, c := range []struct{ shell, want string }{
		{"cat ../endpoint.key", "Permission denied"},
		{"cat ../config.json", "Permission denied"},
		{"cat shadow", "Permission denied"},
		{"echo x > ../config.json", "Permission denied"},
		{"echo x > /usr/lnk-run-test", "Permission denied"},
		{"bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + "'", "Permission denied|Network is unreachable"}, // Landlock's (ABI 4 on), else the network namespace's
		{"kill -9 -1; echo after", ""},
	} {
		text, _ := call(t, s, map[string]any{"shell": c.shell})
		said := false
		for _, w := range strings.Split(c.want, "|") {
			said = said || strings.Contains(text, w)
		}
		if !said || strings.Contains(text, "KEY") {
			t.Errorf("%s: %q", c.shell, text)
		}
		if text, failed := call(t, s, map[string]any{"command": []string{"echo", "serving"}}); failed || !strings.Contains(text, "stdout:\nserving\n") {
			t.Fatalf("after %s: %q", c.shell, text)
		}
	}
	if b, _ := os.ReadFile(p.Config()); len(b) != len(`{"run": {"timeout": 10}}`) {
		t.Fatalf("config.json now %q", b)
	}
}
