//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
)

// The real program, an agent joining its agents file: it ends by itself,
// having started the next process, which serves the agent that joined
// and the one already there.
func TestAgentsFileRestartsProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	bin := buildHarness(t)
	home, dir := t.TempDir(), t.TempDir()
	alpha, beta := fixedAgent(t, dir, home, "alpha"), fixedAgent(t, dir, home, "beta")
	path := filepath.Join(dir, "agents")
	writeAgents(t, path, alpha)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// Files, not pipes: the next process writes where this one did, and
	// outlives it.
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(bin, "serve", "--agents", path, "--model", "offline")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	logs := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	answers(ctx, t, alpha, "hello alpha", logs)

	writeAgents(t, path, alpha, beta) // beta joins
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("the first process ended with %v: %s", err, logs())
		}
	case <-ctx.Done():
		t.Fatalf("the agents file changed, and the process went on: %s", logs())
	}
	m := regexp.MustCompile(`next process started" pid=(\d+)`).FindStringSubmatch(logs())
	if m == nil {
		t.Fatalf("no next process was started: %s", logs())
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	answers(ctx, t, beta, "hello beta", logs)
	answers(ctx, t, alpha, "alpha again", logs)
}

// answers sends text to a until it is answered, dialling again while
// nothing listens (a dial refused sent nothing).
func answers(ctx context.Context, t *testing.T, a *testAgent, text string, logs func() string) {
	t.Helper()
	testwait.For(t, time.Minute, a.line.Name+" listening: "+text+" answered", func() bool {
		got, err := sayAs(ctx, a.url, a.key, a.line.Name, "telegram:1", text)
		var de *endpoint.DialError
		switch {
		case err == nil && strings.Contains(got, text):
			return true
		case errors.As(err, &de) && ctx.Err() == nil:
			return false
		}
		t.Fatalf("%s answered %q, %v: %s", a.line.Name, got, err, logs())
		return false
	})
}
