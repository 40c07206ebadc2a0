// Package acptest is what the tests that speak with the official
// TypeScript ACP SDK share: node and the SDK installed in acp/testdata/ts
// found (a test skipped without them, failed under CI), and a script of
// it run against a Go peer on its standard input and output.
package acptest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Missing skips a test whose outside part isn't installed, except in CI,
// where .ci/run installs it and its absence is a failure, never a pass.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// Node is node's path, or the test skipped (Missing) without it.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node is not installed")
	}
	return node
}

// TypeScriptSDK gives node's path and acp/testdata/ts, the folder the
// SDK is installed in (`npm ci --prefix acp/testdata/ts`), or skips the
// test (Missing) saying which is not there.
func TypeScriptSDK(t testing.TB) (node, dir string) {
	t.Helper()
	node = Node(t)
	_, file, _, _ := runtime.Caller(0)
	dir = filepath.Join(filepath.Dir(file), "..", "testdata", "ts")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		Missing(t, "the TypeScript SDK is not installed: npm ci --prefix acp/testdata/ts")
	}
	return node, dir
}

// RunScript runs script of acp/testdata/ts with args, the SDK as one
// peer, and serve as the other on the script's standard output and input
// (within a minute): the test fails if either does, and is given what
// the script wrote to its standard error, where it reports.
func RunScript(t testing.TB, script string, args []string, serve func(ctx context.Context, r io.Reader, w io.Writer) error) string {
	t.Helper()
	node, dir := TypeScriptSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serveErr := serve(ctx, stdout, stdin)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node %s %v: %v\n%s", script, args, err, stderr.String())
	}
	if serveErr != nil {
		t.Errorf("serve: %v", serveErr)
	}
	return stderr.String()
}
