package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/tools/sandbox"
)

// lnk-sandbox, built as it is installed, is the trampoline of a sandboxed
// command (sandbox.UseProgram): the command runs confined in the
// workspace (the agent's key beside it refused); started by hand it
// refuses, saying so.
func TestTrampoline(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "lnk-sandbox")
	if out, err := exec.Command("go", "build", "-o", prog, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	out, err := exec.Command(prog).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "never by hand") {
		t.Fatalf("by hand: exit %d, %s", code, out)
	}

	home, err := os.MkdirTemp("/var/tmp", "lnk-sandbox-test")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "files")
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(home, "endpoint.key"), []byte("KEY"), 0o600)
	sandbox.UseProgram(prog)
	cmd, err := sandbox.Command(sandbox.Spec{Args: []string{"sh", "-c", "pwd; cat ../endpoint.key"}, Dir: ws, Env: sandbox.Env(ws, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != prog {
		t.Fatalf("the trampoline is %s, not lnk-sandbox", cmd.Path)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if exitCode(err) != 1 || stdout.String() != ws+"\n" || !strings.Contains(stderr.String(), "Permission denied") || strings.Contains(stdout.String()+stderr.String(), "KEY") {
		t.Fatalf("exit %d, stdout %q, stderr %q", exitCode(err), stdout.String(), stderr.String())
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
