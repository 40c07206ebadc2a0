package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/stdioagent"
)

// TestHubKilledMidTurn: lnk-acp killed outright mid-turn leaves no
// harness running, and started again on the same home it takes the
// thread up in the same session.
func TestHubKilledMidTurn(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(home, "key")
	key := []byte("lnk-acp-test-key")
	os.WriteFile(keyFile, key, 0o600)
	run := func() (*exec.Cmd, string) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "LNK_ACP_TEST_MAIN=1", stdioagent.Role+"=", stdioagent.EnvState+"="+state, stdioagent.EnvCaps+"=resume,load",
			"LNK_ACP_TEST_ARGS=--home "+home+" --key-file "+keyFile+" --port 0 -- env "+stdioagent.Role+"=agent "+os.Args[0])
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 256)
		n, _ := out.Read(buf)
		line := strings.TrimSpace(string(buf[:n]))
		url, ok := strings.CutPrefix(line, "endpoint ")
		if !ok {
			t.Fatalf("lnk-acp said %q", line)
		}
		return cmd, url
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, url := run()
	if got := message(t, ctx, url, key, "telegram:1", "one"); got != "echo: one" {
		t.Fatalf("answered %q", got)
	}
	// Mid-turn: a turn that waits, then the hub killed.
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	chunks := make(chan string, 8)
	c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
		if strings.Contains(string(params), "waiting") {
			chunks <- "waiting"
		}
	})
	c.Initialize(ctx)
	c.Resume(ctx, "telegram:1")
	go c.Prompt(ctx, "telegram:1", []acp.Block{{Type: "text", Text: "wait"}}, nil)
	<-chunks
	pgid := lastPgid(t, state)
	cmd.Process.Kill()
	cmd.Wait()
	c.Close()
	// Its processes, orphaned, are the init's to reap: one that isn't a
	// zombie outlived the hub.
	deadline := time.Now().Add(5 * time.Second)
	for running(pgid) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := running(pgid); n > 0 {
		t.Errorf("%d processes of the harness's group %d outlived its hub", n, pgid)
	}

	cmd, url = run()
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	if got := message(t, ctx, url, key, "telegram:1", "history"); got != `history: "one" | "wait"` {
		t.Errorf("after the hub was killed the thread's history is %q, want its session's", got)
	}
}

// running counts the processes of group pgid that aren't zombies.
func running(pgid int) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			n++
		}
	}
	return n
}

// lastPgid is the process group of the agent last started.
func lastPgid(t *testing.T, state string) int {
	b, _ := os.ReadFile(filepath.Join(state, "log"))
	pgid := 0
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "pgid "); ok {
			pgid = atoi(rest)
		}
	}
	if pgid == 0 {
		t.Fatal("no agent logged its group")
	}
	return pgid
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}
