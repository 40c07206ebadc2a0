package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestRealAgentsKilled: lnk-acp --preset NAME killed outright, once its
// real agent answered a message, leaves none of the agent's processes
// running, whatever its tree: npm's codex-acp is a node wrapper whose
// native binary outlived it (reparented, its input's end unnoticed),
// claude-agent-acp starts Claude Code, Gemini CLI starts itself again.
func TestRealAgentsKilled(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			p := runRealProcess(t, a)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if got := message(t, ctx, p.url, p.key, "telegram:1", "remember the word pelican"); !strings.Contains(got, "pelican") {
				t.Fatalf("answered %q", got)
			}
			kept := descendantsOf(p.cmd.Process.Pid)
			var names []string
			for _, pid := range kept {
				names = append(names, comm(pid))
			}
			p.cmd.Process.Kill()
			p.cmd.Wait()
			killed := time.Now()
			for _, pid := range kept {
				testwait.For(t, time.Until(killed.Add(10*time.Second)), fmt.Sprintf("process %d (%s) to end with lnk-acp killed outright", pid, comm(pid)), func() bool { return !alive(pid) })
			}
			t.Logf("%d processes under lnk-acp (%s) ended %v after its kill", len(kept), strings.Join(names, " "), time.Since(killed).Round(time.Millisecond))
		})
	}
}

// realProcess is lnk-acp run as a process of its own with a real agent
// and the fake provider.
type realProcess struct {
	cmd    *exec.Cmd
	url    string
	key    []byte
	fake   *fakeprovider.Server
	stderr *syncBuffer
}

// runRealProcess runs lnk-acp --preset a.name with flags as a process
// of its own (this test binary), its agent a, which waits up to two
// minutes for each call of the agent's (a loaded machine's Gemini CLI
// takes over 30 s to start).
func runRealProcess(t testing.TB, a realAgent, flags ...string) *realProcess {
	t.Helper()
	bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
	p := &realProcess{fake: fakeprovider.New(), stderr: &syncBuffer{}}
	t.Cleanup(p.fake.Close)
	home, keyFile, key := keyedHome(t)
	work := t.TempDir()
	p.key = key
	args := append([]string{"--preset", a.name, "--home", home, "--dir", work, "--key-file", keyFile, "--port", "0", "--call-timeout", "2m"}, flags...)
	args = append(append(args, "--"), a.command(bin, p.fake.URL())...)
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LNK_HOME=" + home, stdioagent.Role + "=",
		"LNK_ACP_TEST_MAIN=1", "LNK_ACP_TEST_ARGS=" + strings.Join(args, " ")}
	for k, v := range a.env(p.fake.URL()) {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stderr = p.stderr
	p.url = startProcess(t, p.cmd)
	return p
}

// TestRealAgentsSIGTERM: lnk-acp --preset NAME told SIGTERM while its
// real agent waits for a model call that never answers ends within its
// 5 s grace and a little, none of the agent's processes left; before, it
// waited for the turn (three signals did nothing).
func TestRealAgentsSIGTERM(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			p := runRealProcess(t, a)
			for range 4 {
				p.fake.Script(fakeprovider.Turn{Hang: true})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			go proctest.Prompt(ctx, p.url, p.key, "main", "telegram:1", "held")
			testwait.For(t, time.Minute, "the model to be called", func() bool { return heldCall(p.fake, "held") })
			kept := descendantsOf(p.cmd.Process.Pid)
			exited := make(chan struct{})
			go func() { p.cmd.Wait(); close(exited) }()
			start := time.Now()
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(7 * time.Second):
				t.Fatalf("lnk-acp still ran %v after SIGTERM", time.Since(start))
			}
			took := time.Since(start)
			for _, pid := range kept {
				if alive(pid) {
					t.Errorf("process %d (%s) outlived lnk-acp's SIGTERM", pid, comm(pid))
				}
			}
			t.Logf("lnk-acp ended %v after SIGTERM, a model call held; %d processes under it, none left", took.Round(time.Millisecond), len(kept))
		})
	}
}

// heldCall says whether the fake provider was sent a request holding
// text.
func heldCall(fake *fakeprovider.Server, text string) bool {
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Body), text) {
			return true
		}
	}
	return false
}
