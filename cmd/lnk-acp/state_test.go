package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// stateClient opens a connection to the endpoint at url for the agent
// state methods.
func stateClient(t *testing.T, ctx context.Context, url string, key []byte) *acp.Client {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(context.Background(), f, nil)
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// entryTexts gives each of entries as its role and text.
func entryTexts(entries []contract.StateEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Role+": "+e.Text)
	}
	return out
}

// sameTexts reports whether a and b hold the same texts in the same order.
func sameTexts(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStateMovesAndBack: a conversation moves from Link Harness (a real
// lnk-link-harness serve --stdio behind lnk-acp, its model the fake
// provider) to the scripted agent behind another lnk-acp, whose store
// writes the agent's own files, and back; the text of every message and
// answer survives both ways, and each side's next prompt goes on where
// the conversation was.
func TestStateMovesAndBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lnk-link-harness")
	}
	bin := buildLinkHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(), "PATH": os.Getenv("PATH")}
	link, key := startCommand(t, env, bin, "serve", "--stdio", "--home", t.TempDir(), "--model", "anthropic/claude-test")
	first := message(t, ctx, link.URL(), key, "telegram:1", "the first question")
	second := message(t, ctx, link.URL(), key, "telegram:1", "a second one,\nover two lines")
	if first == "" || second == "" {
		t.Fatalf("Link Harness answered %q and %q", first, second)
	}
	want := []string{"user: the first question", "agent: " + first, "user: a second one,\nover two lines", "agent: " + second}

	out, err := stateClient(t, ctx, link.URL(), key).ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Conversations) != 1 || !sameTexts(entryTexts(out.Conversations[0].Entries), want) {
		t.Fatalf("Link Harness exported %+v, want %q", out, want)
	}

	state := t.TempDir()
	scripted, skey := runEdited(t, map[string]string{stdioagent.Role: "agent", stdioagent.EnvState: state, stdioagent.EnvCaps: "resume,load"}, nil,
		func(m *Main) { m.Store = stdioagent.Store{Dir: state} }, os.Args[0])
	res, err := stateClient(t, ctx, scripted.URL(), skey).ImportState(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conversations) != 1 || res.Conversations[0].Thread != "telegram:1" {
		t.Fatalf("the scripted agent's hub imported %+v", res)
	}
	if got := message(t, ctx, scripted.URL(), skey, "telegram:1", "history"); got != `history: "the first question" | "a second one,\nover two lines"` {
		t.Errorf("the scripted agent's next prompt there: %q", got)
	}
	back, err := stateClient(t, ctx, scripted.URL(), skey).ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Conversations) != 1 || !sameTexts(entryTexts(back.Conversations[0].Entries)[:4], want) {
		t.Fatalf("the scripted agent exported %+v, want %q first", back, want)
	}

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
	home, err := lc.ExportState(ctx, contract.StateExportParams{Threads: []string{"link:import-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(home.Conversations) != 1 || !sameTexts(entryTexts(home.Conversations[0].Entries), entryTexts(back.Conversations[0].Entries)) {
		t.Fatalf("Link Harness has %+v, want %q", home, entryTexts(back.Conversations[0].Entries))
	}
	message(t, ctx, link.URL(), key, "link:import-1", "and now?")
	reqs := fake.Requests()
	last := string(reqs[len(reqs)-1].Body)
	for _, w := range []string{"the first question", "over two lines", "and now?"} {
		if !strings.Contains(last, w) {
			t.Errorf("the imported thread's next model call doesn't hold %q: %.400s", w, last)
		}
	}
}
