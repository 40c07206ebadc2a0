package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestRealClaudeClear: /new reaches real Claude as /clear, and the
// conversation is cleared. claude-agent-acp 0.23.1 lists Claude Code's
// commands as the Claude Code it runs offers them to the SDK; the
// cli.js its SDK (0.2.83) ships offers no clear in that mode
// (supportsNonInteractive false), Claude Code 2.1.332 does, so
// CLAUDE_CODE_EXECUTABLE names it (.ci/run installs
// @anthropic-ai/claude-code). On the agent's stdio the hub is seen to
// send the /new prompt as /clear, after the session listed clear; the
// model's request of the next turn no longer carries the earlier
// message, nor, after lnk-acp restarts, does the thread's next. The
// session /clear left is closed (session/close, which Claude offers).
func TestRealClaudeClear(t *testing.T) {
	bin := realAgentBin(t, "claude-agent-acp")
	cli := filepath.Join(realAgentBin(t, "claude"), "claude")
	fake := fakeprovider.New()
	defer fake.Close()
	home, work, wire := t.TempDir(), t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "LNK_HOME": home,
		"ANTHROPIC_BASE_URL": fake.URL(), "ANTHROPIC_API_KEY": "x", "IS_SANDBOX": "1",
		"CLAUDE_CODE_EXECUTABLE": cli, "DISABLE_AUTOUPDATER": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	flags := []string{"--home", home, "--dir", work, "--preset", "claude"}
	m, key := runReal(t, env, flags, tapped(wire, []string{filepath.Join(bin, "claude-agent-acp")})...)
	if got := message(t, ctx, m.URL(), key, "telegram:1", "remember the word pelican"); !strings.Contains(got, "pelican") {
		t.Fatalf("answered %q, want the fake provider's echo of the message", got)
	}
	message(t, ctx, m.URL(), key, "telegram:1", "/new")
	cleared := len(fake.Requests())
	got := message(t, ctx, m.URL(), key, "telegram:1", "which word?")
	if !strings.Contains(got, "which word?") {
		t.Fatalf("after /new answered %q", got)
	}

	var prompts []string
	listed, closed := false, 0
	for _, m := range wireLines(t, filepath.Join(wire, "in.jsonl")) {
		if m.Method == "session/close" && len(prompts) == 2 {
			closed++
		}
		if m.Method == "session/prompt" {
			var blocks []struct{ Type, Text string }
			json.Unmarshal(m.Params.Prompt, &blocks)
			text := string(m.Params.Prompt)
			if len(blocks) == 1 && blocks[0].Type == "text" {
				text = blocks[0].Text
			}
			prompts = append(prompts, text)
		}
	}
	for _, m := range wireLines(t, filepath.Join(wire, "out.jsonl")) {
		for _, c := range m.Params.Update.AvailableCommands {
			listed = listed || c.Name == "clear"
		}
	}
	if !listed {
		t.Fatalf("Claude's session listed no clear command in its available_commands_update")
	}
	if len(prompts) != 3 || prompts[1] != "/clear" {
		t.Fatalf("the agent was sent the prompts %q, want the second /clear", prompts)
	}
	if closed != 1 {
		t.Errorf("between /clear and the next prompt the agent was sent %d session/close, want 1", closed)
	}
	next := 0
	for _, r := range fake.Requests()[cleared:] {
		if !strings.Contains(string(r.Body), "which word?") {
			continue
		}
		next++
		if strings.Contains(string(r.Body), "pelican") {
			t.Errorf("the model's request after /clear still carries the first message: the conversation was not cleared")
		}
	}
	if next == 0 {
		t.Fatalf("no model request after /clear carried the next message")
	}
	if !carries(fake.Requests()[:cleared], "pelican") {
		t.Fatalf("no model request before /clear carried the first message")
	}

	// After a restart the thread goes on in the conversation begun after
	// /new, not the one /clear cleared (Action.NewSession).
	m.Close()
	m, key = runReal(t, env, flags, filepath.Join(bin, "claude-agent-acp"))
	restarted := len(fake.Requests())
	message(t, ctx, m.URL(), key, "telegram:1", "and now?")
	next = 0
	for _, r := range fake.Requests()[restarted:] {
		if !strings.Contains(string(r.Body), "and now?") {
			continue
		}
		next++
		if strings.Contains(string(r.Body), "pelican") || !strings.Contains(string(r.Body), "which word?") {
			t.Errorf("after a restart the model's request holds pelican %v, which word? %v: want the conversation begun after /new",
				strings.Contains(string(r.Body), "pelican"), strings.Contains(string(r.Body), "which word?"))
		}
	}
	if next == 0 {
		t.Fatalf("no model request after the restart carried its message")
	}
}

// wireMessage is a JSON-RPC message on a tapped agent's stdio, read for
// its prompt and its listed commands.
type wireMessage struct {
	Method string `json:"method"`
	Params struct {
		Prompt json.RawMessage `json:"prompt"`
		Update struct {
			AvailableCommands []struct {
				Name string `json:"name"`
			} `json:"availableCommands"`
		} `json:"update"`
	} `json:"params"`
}

// wireLines reads a tap's file, a message a line.
func wireLines(t *testing.T, name string) []wireMessage {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []wireMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m wireMessage
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// carries says whether one of reqs' bodies holds text.
func carries(reqs []fakeprovider.Request, text string) bool {
	for _, r := range reqs {
		if strings.Contains(string(r.Body), text) {
			return true
		}
	}
	return false
}
