package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/internal/testwait"
)

// TestHubKilledMidTurn: lnk-acp killed outright mid-turn leaves no
// harness running, and started again on the same home it takes the
// thread up in the same session.
func TestHubKilledMidTurn(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(home, "key")
	key := []byte("lnk-acp-test-key")
	os.WriteFile(keyFile, key, 0o600)
	run := func() (*exec.Cmd, string) { return runProcess(t, home, keyFile, state) }
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
	testwait.For(t, 5*time.Second, fmt.Sprintf("the processes of the harness's group %d to end with its hub", pgid), func() bool { return running(pgid) == 0 })

	cmd, url = run()
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	if got := message(t, ctx, url, key, "telegram:1", "history"); got != `history: "one" | "wait"` {
		t.Errorf("after the hub was killed the thread's history is %q, want its session's", got)
	}
}

// runProcess runs lnk-acp as a process of its own (this test binary) on
// home, the scripted agent behind it keeping its sessions in state, and
// returns it with its endpoint's address.
func runProcess(t *testing.T, home, keyFile, state string) (*exec.Cmd, string) {
	t.Helper()
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
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("lnk-acp said %q", line)
	}
	return cmd, url
}

// TestRecoverAfterKill: the answers nobody took outlive a SIGKILL of
// lnk-acp: kept before the kill, handed over by _link/recover after it,
// with their ids; one done let go, and one handed over in a single
// phase, stay gone after the next kill.
func TestRecoverAfterKill(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(home, "key")
	key := []byte("lnk-acp-test-key")
	os.WriteFile(keyFile, key, 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, url := runProcess(t, home, keyFile, state)
	kill := func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	defer func() { kill() }()
	answers := filepath.Join(home, "agents", "main", "hub", "answers.json")
	for i, thread := range []string{"telegram:1", "telegram:2"} {
		// The bridge goes once the prompt is taken: its answer, a second
		// later, is kept.
		f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		taken := make(chan struct{}, 1)
		c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
			if method == "_link/taken" {
				taken <- struct{}{}
			}
		})
		c.Initialize(ctx)
		c.Resume(ctx, thread)
		go c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: "slow"}}, nil)
		select {
		case <-taken:
		case <-ctx.Done():
			t.Fatal("the prompt was never taken")
		}
		c.Close()
		testwait.For(t, 30*time.Second, fmt.Sprintf("answer %d kept in %s", i+1, answers), func() bool { return strings.Count(readFile(answers), "slow done") >= i+1 })
	}
	before := recoverAt(t, ctx, url, key, `{"two_phase":true}`)
	if len(before.Answers) != 2 {
		t.Fatalf("two-phase recover before the kill: %+v", before.Answers)
	}
	recoverAt(t, ctx, url, key, `{"done":[`+strconv.Quote(before.Answers[0].ID)+`]}`)
	kill()

	cmd, url = runProcess(t, home, keyFile, state)
	after := recoverAt(t, ctx, url, key, `{"two_phase":true}`)
	if len(after.Answers) != 1 || after.Answers[0] != before.Answers[1] {
		t.Fatalf("two-phase recover after the kill: %+v, want %+v alone", after.Answers, before.Answers[1])
	}
	one := recoverAt(t, ctx, url, key, `{}`)
	if len(one.Answers) != 1 || one.Answers[0].Text != "slow done" || one.Answers[0].Thread != "telegram:2" {
		t.Fatalf("single-phase recover after the kill: %+v", one.Answers)
	}
	kill()

	cmd, url = runProcess(t, home, keyFile, state)
	if again := recoverAt(t, ctx, url, key, `{"two_phase":true}`); len(again.Answers) != 0 {
		t.Errorf("after a single phase and a kill, recover hands over %+v again", again.Answers)
	}
}

// recoverAt asks the endpoint at url for _link/recover with params.
func recoverAt(t *testing.T, ctx context.Context, url string, key []byte, params string) contract.RecoverResult {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(ctx, f, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Conn().Call(ctx, contract.MethodRecover, json.RawMessage(params))
	if err != nil {
		t.Fatalf("recover %s: %v", params, err)
	}
	var res contract.RecoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
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

// TestHubKilledLeavesNothing: lnk-acp killed outright leaves nothing of
// its agent running, not even a process the agent started in a session
// of its own that ignores SIGTERM (as npm's codex-acp's native binary
// outlived its node wrapper, the one kill-with-parent reached): the
// harness's keeper ends them all at once.
func TestHubKilledLeavesNothing(t *testing.T) {
	home, keyFile, key := keyedHome(t)
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, url := runProcess(t, home, keyFile, state)
	defer cmd.Process.Kill()
	if got := message(t, ctx, url, key, "telegram:1", "escape"); got != "escaped" {
		t.Fatalf("answered %q", got)
	}
	kept := descendantsOf(cmd.Process.Pid)
	if len(kept) < 3 { // the keeper, the agent, the escapee
		t.Fatalf("lnk-acp runs %v, want its keeper, agent and escapee", kept)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	for _, pid := range kept {
		testwait.For(t, time.Until(killed.Add(5*time.Second)), fmt.Sprintf("process %d (%s) to end with lnk-acp killed outright", pid, comm(pid)), func() bool { return !alive(pid) })
	}
	t.Logf("%d processes under lnk-acp all ended %v after its kill", len(kept), time.Since(killed).Round(time.Millisecond))
}

// descendantsOf are the processes under pid, read from /proc.
func descendantsOf(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(p); len(f) > 1 {
			children[atoi(f[1])] = append(children[atoi(f[1])], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// statFields are /proc/pid/stat's fields after the command's name:
// state, ppid, pgrp, ...
func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// alive says process pid runs (a zombie doesn't: its parent, init once
// lnk-acp is gone, reaps it).
func alive(pid int) bool {
	f := statFields(pid)
	return len(f) > 0 && f[0] != "Z"
}

// comm is process pid's command name.
func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}
