package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/stdioagent"
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
			bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
			fake := fakeprovider.New()
			defer fake.Close()
			home, work := t.TempDir(), t.TempDir()
			keyFile := filepath.Join(home, "key")
			key := []byte("lnk-acp-test-key")
			os.WriteFile(keyFile, key, 0o600)
			args := append([]string{"--preset", a.name, "--home", home, "--dir", work, "--key-file", keyFile, "--port", "0", "--call-timeout", "2m", "--"}, a.command(bin, fake.URL())...)
			cmd := exec.Command(os.Args[0])
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LNK_HOME=" + home, stdioagent.Role + "=",
				"LNK_ACP_TEST_MAIN=1", "LNK_ACP_TEST_ARGS=" + strings.Join(args, " ")}
			for k, v := range a.env(fake.URL()) {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, _ := bufio.NewReader(out).ReadString('\n')
			url, ok := strings.CutPrefix(strings.TrimSpace(line), "endpoint ")
			if !ok {
				t.Fatalf("lnk-acp said %q", line)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if got := message(t, ctx, url, key, "telegram:1", "remember the word pelican"); !strings.Contains(got, "pelican") {
				t.Fatalf("answered %q", got)
			}
			kept := descendantsOf(cmd.Process.Pid)
			var names []string
			for _, pid := range kept {
				names = append(names, comm(pid))
			}
			cmd.Process.Kill()
			cmd.Wait()
			killed := time.Now()
			for _, pid := range kept {
				for alive(pid) && time.Since(killed) < 10*time.Second {
					time.Sleep(10 * time.Millisecond)
				}
				if alive(pid) {
					t.Errorf("process %d (%s) outlived lnk-acp killed outright", pid, comm(pid))
				}
			}
			t.Logf("%d processes under lnk-acp (%s) ended %v after its kill", len(kept), strings.Join(names, " "), time.Since(killed).Round(time.Millisecond))
		})
	}
}
