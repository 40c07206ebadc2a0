package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	runtool "github.com/lnk-dev/link/tools/run"
)

// From a fresh home, lnk agent chat starts run beside the agent: the
// model's run__command runs in the agent's workspace, sandboxed, and the
// model reads its output in the next round, the answer built on it.
func TestChatRunsCommand(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "run__command", Input: `{"shell":"wc -w < todo.txt; cat ../endpoint.key"}`}}},
		fakeprovider.Turn{Text: "Your todo list has 3 words."},
	)
	home, err := os.MkdirTemp("/var/tmp", "lnk-chat-run")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Files(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Files()+"/todo.txt", []byte("fix the typo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	code, out, errOut := chatIn(t, env, "how long is my todo list?\n")
	if code != 0 || !strings.Contains(out, "⚙ run__command") || !strings.Contains(out, "Your todo list has 3 words.") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "its run answers on 127.0.0.1:") {
		t.Fatalf("didn't say run started: %s", errOut)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !slices.Contains(reqs[0].Tools, "run__command") {
		t.Fatalf("%d requests; tools %v", len(reqs), reqs[0].Tools)
	}
	if !strings.Contains(reqs[0].System, runtool.Instructions) {
		t.Fatalf("the tools section lacks run's instructions:\n%s", reqs[0].System)
	}
	ans := toolAnswers(t, home, "link:chat")
	if len(ans) != 1 || !strings.Contains(ans[0].Text, "stdout:\n3\n") || !strings.Contains(ans[0].Text, "../endpoint.key: Permission denied") {
		t.Fatalf("run__command's answer: %+v", ans)
	}
	key, _ := os.ReadFile(p.KeyFile())
	if len(key) == 0 || strings.Contains(string(reqs[1].Body), strings.TrimSpace(string(key))) {
		t.Fatal("the endpoint key reached the model")
	}
	if !strings.Contains(string(reqs[1].Body), `3\n`) {
		t.Fatalf("the model wasn't given the output: %s", reqs[1].Body)
	}
}
