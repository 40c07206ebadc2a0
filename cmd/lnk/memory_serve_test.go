package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/agentlog"
	"github.com/lnk-dev/link/memory/server"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

// toolAnswers are the tool results thread keeps, in order.
func toolAnswers(t *testing.T, home, thread string) []store.Event {
	t.Helper()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := log.Open(p.Chats()).Read(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Event
	for _, e := range evs {
		if e.Kind == store.KindToolResult {
			out = append(out, e)
		}
	}
	return out
}

// From a fresh home, lnk agent chat starts Link Memory beside the agent:
// its calls are offered as memory__<call>, and a note the model
// remembers is in memory/notes.md, dated, and in the next turn's notes
// section.
func TestChatRemembers(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "memory__remember", Input: `{"note":"Ana's bike is the red one"}`}}},
		fakeprovider.Turn{Text: "I'll remember."},
		fakeprovider.Turn{Text: "Noted before."},
	)
	home := t.TempDir()
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	code, out, errOut := chatIn(t, env, "my bike is the red one\nand again\n")
	if code != 0 || !strings.Contains(out, "⚙ memory__remember done\nI'll remember.\n") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "its memory answers on 127.0.0.1:") {
		t.Fatalf("didn't say memory started: %s", errOut)
	}
	// Its address is said without the secret, on the terminal and in
	// the agent's log.
	ap, _ := store.For(home, "main")
	agentLog, err := os.ReadFile(agentlog.File(ap))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if strings.Contains(errOut, "/mcp/") || strings.Contains(out, "/mcp/") || strings.Contains(string(agentLog), "/mcp/") {
		t.Fatalf("memory's secret address was said: %s\n%s", errOut, agentLog)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, want := range []string{"memory__forget", "memory__links", "memory__list", "memory__read", "memory__remember", "memory__search"} {
		if !slices.Contains(reqs[0].Tools, want) {
			t.Errorf("%s not offered: %v", want, reqs[0].Tools)
		}
	}
	p, _ := store.For(home, "main")
	b, err := os.ReadFile(p.Notes())
	if err != nil {
		t.Fatal(err)
	}
	if want := "- " + time.Now().Format("2006-01-02") + ": Ana's bike is the red one\n"; string(b) != want {
		t.Fatalf("notes.md %q, want %q", b, want)
	}
	if ans := toolAnswers(t, home, "link:chat"); len(ans) != 1 || ans[0].IsError || !strings.HasPrefix(ans[0].Text, "Remembered.") {
		t.Fatalf("remember's answer: %+v", ans)
	}
	// The next turn's prompt, as the provider got it: its notes section
	// holds the note (the turn that remembered it was composed before),
	// and its tools section memory's instructions, whole.
	notes := "# Your notes\n\n" + strings.TrimSuffix(string(b), "\n")
	if strings.Contains(reqs[1].System, notes) {
		t.Fatalf("the turn that remembered had the note already:\n%s", reqs[1].System)
	}
	if !strings.Contains(reqs[2].System, notes) {
		t.Fatalf("the next turn's system prompt lacks %q:\n%s", notes, reqs[2].System)
	}
	if !strings.Contains(reqs[2].System, server.Instructions) {
		t.Fatalf("the tools section lacks memory's instructions, whole:\n%s", reqs[2].System)
	}
}

// A fact said 500 messages earlier in another conversation is found by a
// search from this one, naming that conversation and message; twenty
// searches in one conversation never find themselves, the message being
// answered, or what an earlier search answered (the copy holds no tool's
// call or answer); and the first search made again after them answers
// word for word as it did.
func TestChatSearchesWhatWasSaid(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	lg := log.Open(p.Chats())
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	var evs []store.Event
	for i := int64(1); i <= 500; i++ {
		e := store.Event{Seq: i, Time: at.Add(time.Duration(i) * time.Minute), Kind: store.KindMessage, Text: fmt.Sprintf("message %d about the weather and lunch", i)}
		if i == 1 {
			e.Text = "The spare key is under the blue flowerpot by the shed."
		}
		if i%2 == 0 {
			e.Kind, e.Text = store.KindAnswer, fmt.Sprintf("answer %d, sunny", i)
		}
		if err := lg.Append(ctx, "telegram:7", e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if err := transcript.Append(ctx, p, lg, "telegram:7", "", evs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Files(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Files(), "zoo.md"), []byte("The quokka lives on Rottnest Island.\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	fake := fakeprovider.New()
	defer fake.Close()
	var turns []fakeprovider.Turn
	turns = append(turns,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_k", Name: "memory__search", Input: `{"query":"spare key flowerpot"}`}}},
		fakeprovider.Turn{Text: "Found where it is."},
	)
	var lines []string
	lines = append(lines, "where did I leave it?") // none of the words searched, so what was said adds nothing to the search
	for i := range 20 {
		turns = append(turns,
			fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: fmt.Sprintf("toolu_%d", i), Name: "memory__search", Input: `{"query":"quokka island search"}`}}},
			fakeprovider.Turn{Text: fmt.Sprintf("Found it, time %d.", i)},
		)
		lines = append(lines, fmt.Sprintf("look it up again, island search %d", i))
	}
	turns = append(turns,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_again", Name: "memory__search", Input: `{"query":"spare key flowerpot"}`}}},
		fakeprovider.Turn{Text: "Same place."},
	)
	lines = append(lines, "and where was that again?")
	fake.Script(turns...)
	env := map[string]string{"LNK_HOME": home, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	code, out, errOut := chatIn(t, env, strings.Join(lines, "\n")+"\n")
	if code != 0 {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	ans := toolAnswers(t, home, "link:chat")
	if len(ans) != 22 {
		t.Fatalf("%d searches answered, want 22", len(ans))
	}
	if ans[21].Text != ans[0].Text {
		t.Fatalf("the first search again, after twenty:\n%s\nwas:\n%s", ans[21].Text, ans[0].Text)
	}
	if first := ans[0].Text; !strings.Contains(first, "1. chats/telegram:7, message #1 (Owner · 2026-11-01 08:01 UTC)") || !strings.Contains(first, "The spare key is under the blue flowerpot by the shed.") {
		t.Fatalf("the fact 500 messages back:\n%s", first)
	}
	// Each search finds the file, and the owner's earlier messages
	// (answered, so in the copy) from the second on; never the message it
	// answers, never a search's answer (its header, its snippets).
	for i, a := range ans[1:21] {
		if a.IsError {
			t.Fatalf("search %d failed: %s", i, a.Text)
		}
		if !strings.Contains(a.Text, "files/zoo.md, line 1") {
			t.Errorf("search %d lacks the file:\n%s", i, a.Text)
		}
		if strings.Contains(a.Text, fmt.Sprintf("island search %d", i)) {
			t.Errorf("search %d found the message it answers:\n%s", i, a.Text)
		}
		if n := strings.Count(a.Text, "Rottnest"); n != 1 {
			t.Errorf("search %d finds the file's words %d times (an echo of earlier answers):\n%s", i, n, a.Text)
		}
		if n := strings.Count(a.Text, "results for"); n != 1 {
			t.Errorf("search %d finds an earlier search's answer:\n%s", i, a.Text)
		}
		if i > 0 && !strings.Contains(a.Text, fmt.Sprintf("island search %d", i-1)) {
			t.Errorf("search %d doesn't find the message answered before it:\n%s", i, a.Text)
		}
	}
}
