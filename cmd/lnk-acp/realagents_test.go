package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
)

// EnvRealAgents names the folder where .ci/run installed the real ACP
// agents from npm (node_modules/.bin/claude-agent-acp, codex-acp,
// gemini); without it the real agents' tests don't run.
const EnvRealAgents = "LNK_REAL_AGENTS"

// realAgent is one of the real agents, run offline against the fake
// provider as shared/real-agents.md says.
type realAgent struct {
	name    string
	command func(bin, fake string) []string
	env     func(fake string) map[string]string
}

var realAgents = []realAgent{
	{
		name:    "claude",
		command: func(bin, fake string) []string { return []string{filepath.Join(bin, "claude-agent-acp")} },
		env: func(fake string) map[string]string {
			return map[string]string{"ANTHROPIC_BASE_URL": fake, "ANTHROPIC_API_KEY": "x", "IS_SANDBOX": "1"}
		},
	},
	{
		name: "codex",
		command: func(bin, fake string) []string {
			return []string{filepath.Join(bin, "codex-acp"), "-c", `model_provider="fake"`,
				"-c", `model_providers.fake={name="fake",base_url="` + fake + `/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`}
		},
		env: func(fake string) map[string]string { return map[string]string{"OPENAI_API_KEY": "x"} },
	},
	{
		name: "gemini",
		command: func(bin, fake string) []string {
			return []string{filepath.Join(bin, "gemini"), "--acp", "-m", "gemini-2.5-pro"}
		},
		env: func(fake string) map[string]string {
			return map[string]string{"GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake}
		},
	},
}

// TestRealAgents: each real agent, through lnk-acp --preset NAME and the
// fake provider, answers a prompt through the endpoint, and after
// lnk-acp restarts goes on in the same session: the model is sent the
// first message again (Claude and Codex by session/resume, Gemini by
// session/load), the thread not reset, and no history replayed reaches
// the bridge. The restart comes seconds after the session was made, in
// the same minute most often: Gemini CLI 0.61.0's own load spoils a
// session then, unless the gemini preset's store readied its file
// (hub/gemini, PrepareLoad).
func TestRealAgents(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			fake := fakeprovider.New()
			defer fake.Close()
			command, env, flags := realRun(t, a, fake.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			m, key := runReal(t, env, flags, command...)
			got := message(t, ctx, m.URL(), key, "telegram:1", "remember the word pelican")
			if !strings.Contains(got, "pelican") {
				t.Fatalf("answered %q, want the fake provider's echo of the message", got)
			}
			m.Close()
			m, key = runReal(t, env, flags, command...)
			got = message(t, ctx, m.URL(), key, "telegram:1", "which word?")
			if !strings.Contains(got, "which word?") {
				t.Fatalf("after the restart answered %q", got)
			}
			reqs := fake.Requests()
			last := reqs[len(reqs)-1]
			taken := strings.Contains(string(last.Body), "pelican")
			reset := strings.HasPrefix(got, "[The agent could not take up this conversation's session")
			if strings.Contains(got, "pelican") {
				t.Errorf("after the restart the answer %q holds the thread's first message: replayed history reached the bridge", got)
			}
			if !taken || reset {
				t.Errorf("after the restart the session was not taken up (the model sent the first message %v, the thread told reset %v; %d requests)", taken, reset, len(reqs))
			}
		})
	}
}

// realRun is what a test of real agent a runs lnk-acp with, the fake
// provider at fake: the agent's command, lnk-acp's environment (a home of
// its own) and its flags (a's preset, the home, a work folder).
func realRun(t *testing.T, a realAgent, fake string) (command []string, env map[string]string, flags []string) {
	t.Helper()
	bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
	home, work := t.TempDir(), t.TempDir()
	env = map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home}
	for k, v := range a.env(fake) {
		env[k] = v
	}
	return a.command(bin, fake), env, []string{"--preset", a.name, "--home", home, "--dir", work}
}

// runReal runs lnk-acp with flags and a real agent's command. The hub
// waits up to two minutes for each call of the agent's: Gemini CLI's
// start alone took over 30 s (the hub's own bound) on this loaded,
// shared machine.
func runReal(t *testing.T, env map[string]string, flags []string, command ...string) (*Main, []byte) {
	t.Helper()
	return runEdited(t, env, flags, func(m *Main) { m.CallTimeout = 2 * time.Minute }, command...)
}
