package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub/gemini"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// realAgentBin is the folder of the real agents' programs, holding name;
// without one the test is skipped, but fails under CI (CI set), where .ci/run
// installs them.
func realAgentBin(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv(EnvRealAgents)
	bin := filepath.Join(dir, "node_modules", ".bin")
	_, err := os.Stat(filepath.Join(bin, name))
	if dir != "" && err == nil {
		return bin
	}
	why := "$" + EnvRealAgents + " names no folder of the real agents (.ci/run installs them)"
	if dir != "" {
		why = "no " + name + " among the real agents: " + err.Error()
	}
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// heldInOrder says whether each of want (role: text) is held by one of
// got of its role, in order, others between.
func heldInOrder(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i == len(want) {
			break
		}
		role, text, _ := strings.Cut(want[i], ": ")
		if strings.HasPrefix(g, role+": ") && strings.Contains(g, text) {
			i++
		}
	}
	return i == len(want)
}

// stateAgent is a real agent whose own files lnk-acp's preset store
// reads and writes: its preset, and the variable naming its folder.
type stateAgent struct {
	preset, folderEnv, files string
}

// TestRealAgentState: for Claude Code (claude-agent-acp behind lnk-acp
// --preset claude), Codex (codex-acp, --preset codex) and Gemini CLI
// (gemini --acp, --preset gemini), each preset's store writing the
// agent's own session files in the folder its variable names: a conversation moves from Link Harness (a real
// lnk-link-harness serve --stdio behind lnk-acp) into the agent, goes on
// there (the model is sent the earlier messages and answers before the
// new one), and moves back into Link Harness, where it goes on again:
// the text of every message and answer survives. The same session
// exported by replay alone (lnk-acp with no preset, so no store:
// session/list, when the agent has it, and session/load) holds the same
// texts.
func TestRealAgentState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lnk-link-harness and runs the real agents")
	}
	lh := buildLinkHarness(t)
	for _, sa := range []stateAgent{
		{"claude", "CLAUDE_CONFIG_DIR", "projects/*/*.jsonl"},
		{"codex", "CODEX_HOME", "sessions/*/*/*/rollout-*.jsonl"},
		// An imported chat's name has seconds, which Gemini's own don't.
		{"gemini", "GEMINI_CLI_HOME", ".gemini/tmp/*/chats/session-????-??-??T??-??-??-*.jsonl"},
	} {
		t.Run(sa.preset, func(t *testing.T) { testRealAgentState(t, lh, sa) })
	}
}

func testRealAgentState(t *testing.T, lh string, sa stateAgent) {
	var a realAgent
	for _, r := range realAgents {
		if r.name == sa.preset {
			a = r
		}
	}
	bin := realAgentBin(t, filepath.Base(a.command("", "")[0]))
	fake := fakeprovider.New()
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()

	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "PATH": os.Getenv("PATH")}
	link, key := startCommand(t, env, lh, "serve", "--stdio", "--home", t.TempDir(), "--model", "anthropic/claude-test")
	first := message(t, ctx, link.URL(), key, "telegram:1", "the first question")
	second := message(t, ctx, link.URL(), key, "telegram:1", "a second one,\nover two lines")
	want := []string{"user: the first question", "agent: " + first, "user: a second one,\nover two lines", "agent: " + second}
	out, err := stateClient(t, ctx, link.URL(), key).ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Conversations) != 1 || !sameTexts(entryTexts(out.Conversations[0].Entries), want) {
		t.Fatalf("Link Harness exported %+v, want %q", out, want)
	}

	// Into the agent, its folder named by its variable.
	home, work := t.TempDir(), t.TempDir()
	folder := filepath.Join(home, "agent-folder")
	os.Mkdir(folder, 0o700) // Codex wants its CODEX_HOME there
	aenv := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), sa.folderEnv: folder}
	for k, v := range a.env(fake.URL()) {
		aenv[k] = v
	}
	command := a.command(bin, fake.URL())
	agent, akey := runACP(t, aenv, []string{"--preset", sa.preset, "--dir", work}, command...)
	res, err := stateClient(t, ctx, agent.URL(), akey).ImportState(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conversations) != 1 || res.Conversations[0] != (contract.ImportedConversation{From: "telegram:1", Thread: "telegram:1"}) {
		t.Fatalf("the agent's hub imported %+v", res)
	}
	files, _ := filepath.Glob(filepath.Join(folder, sa.files))
	if len(files) != 1 {
		t.Fatalf("the import wrote %q in the agent's folder, want one session file", files)
	}
	n := len(fake.Requests())
	third := message(t, ctx, agent.URL(), akey, "telegram:1", "and now?")
	if !strings.Contains(third, "and now?") {
		t.Fatalf("the agent answered %q", third)
	}
	assertSentHistory(t, fake.Requests()[n:], "and now?", []string{"the first question", first, "a second one,\nover two lines", second, "and now?"})

	back, err := stateClient(t, ctx, agent.URL(), akey).ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	wantBack := append(append([]string{}, want...), "user: and now?", "agent: "+third)
	if len(back.Conversations) != 1 || !sameTexts(entryTexts(back.Conversations[0].Entries), wantBack) {
		t.Fatalf("the agent exported %+v, want %q", back, wantBack)
	}
	agent.Close()

	// The same session by replay alone: no store (or, for Gemini, one
	// that reads nothing), so session/list and session/load give it. Replay can't tell apart the user lines Claude
	// Code writes for a local command (/model at a session's first turn),
	// so they join the message after them: each text is held, not equal.
	rflags := []string{"--home", agent.Home, "--dir", work}
	var edit func(*Main)
	if sa.preset == "gemini" {
		// Gemini CLI 0.61.0 deletes, at its start, a session it loaded
		// before, unless its files are readied (hub/gemini's
		// PrepareStart): the store readies them here, and reads none.
		rflags = append(rflags, "--preset", "gemini")
		edit = func(m *Main) {
			s, err := presetStore("gemini", aenv, work)
			if err != nil {
				t.Fatal(err)
			}
			m.Store = readiesOnly{s.(*gemini.Store)}
		}
	}
	replayed, rkey := runEdited(t, aenv, rflags, edit, command...)
	byReplay, err := stateClient(t, ctx, replayed.URL(), rkey).ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(byReplay.Conversations) != 1 || !heldInOrder(wantBack, entryTexts(byReplay.Conversations[0].Entries)) {
		t.Fatalf("the agent exported by replay %+v, want %q among them", byReplay, wantBack)
	}
	replayed.Close()

	// Back into Link Harness, where telegram:1 is taken: a new thread,
	// every text as it was, and its next turn's model sees them.
	lc := stateClient(t, ctx, link.URL(), key)
	res, err = lc.ImportState(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conversations) != 1 || res.Conversations[0] != (contract.ImportedConversation{From: "telegram:1", Thread: "link:import-1"}) {
		t.Fatalf("Link Harness imported %+v", res)
	}
	again, err := lc.ExportState(ctx, contract.StateExportParams{Threads: []string{"link:import-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Conversations) != 1 || !sameTexts(entryTexts(again.Conversations[0].Entries), wantBack) {
		t.Fatalf("Link Harness has %q, want %q", entryTexts(again.Conversations[0].Entries), wantBack)
	}
	n = len(fake.Requests())
	message(t, ctx, link.URL(), key, "link:import-1", "and back home?")
	assertSentHistory(t, fake.Requests()[n:], "and back home?", []string{"the first question", "over two lines", "and now?", third, "and back home?"})
}

// assertSentHistory checks that the model request that carried prompt
// (among reqs) held each of earlier in its texts (every "text" or string
// "content" of its JSON, in order: Anthropic's and OpenAI Responses'
// messages and Gemini's contents' parts alike), in order.
func assertSentHistory(t *testing.T, reqs []fakeprovider.Request, prompt string, earlier []string) {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		var body any
		if json.Unmarshal(reqs[i].Body, &body) != nil || !strings.Contains(string(reqs[i].Body), prompt) {
			continue
		}
		var texts []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, k := range []string{"text", "content"} {
					if s, ok := v[k].(string); ok {
						texts = append(texts, s)
					}
				}
				for _, k := range []string{"messages", "input", "content", "contents", "parts"} {
					walk(v[k])
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(body)
		all := strings.Join(texts, "\n\u0000")
		at := 0
		for _, e := range earlier {
			k := strings.Index(all[at:], e)
			if k < 0 {
				t.Errorf("the model request carrying %q does not hold %q after what came before: %.3000s", prompt, e, all)
				return
			}
			at += k + len(e)
		}
		return
	}
	t.Errorf("no model request carried %q among %d", prompt, len(reqs))
}

// readiesOnly is Gemini's store readying its files before each start,
// reading and writing none: the hub exports by replay alone.
type readiesOnly struct{ *gemini.Store }

func (readiesOnly) Export(context.Context, string) ([]contract.StateEntry, bool, error) {
	return nil, false, nil
}

func (readiesOnly) Import(context.Context, []contract.StateEntry) (string, error) {
	return "", errors.New("this store reads and writes no session")
}
