package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/stdioagent"
)

// TestLateReplayDropped: history a harness replays after it answered
// session/load (Gemini CLI does), while the thread's turn already runs,
// never reaches the bridge either.
func TestLateReplayDropped(t *testing.T) {
	r := newRig(t, []string{envCaps + "=load", envLateReplay + "=1"}, nil)
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.restart()
	if got := r.message(ctx, "telegram:1", "slow", nil).must(t); got != "slow done" {
		t.Errorf("after a restart the turn's answer is %q, want slow done alone", got)
	}
}

// TestThreadGoesOn: after the hub restarts, a thread goes on in its
// session: resumed when the harness can, else loaded, and what the
// harness replays while it takes the session up never reaches the bridge.
func TestThreadGoesOn(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want []string // how the session was taken up
	}{
		{"resume", []string{envCaps + "=resume,load"}, []string{"resume"}},
		{"load", []string{envCaps + "=load"}, []string{"load"}},
		{"resume refused, then load", []string{envCaps + "=resume,load", envNoResume + "=1"}, []string{"resume", "load"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.env, nil)
			ctx := testCtx(t, 30*time.Second)
			r.message(ctx, "telegram:1", "one", nil).must(t)
			r.restart()
			e := r.message(ctx, "telegram:1", "history", nil)
			got := e.must(t)
			if got != `history: "one"` {
				t.Errorf("after a restart the thread's history is %q", got)
			}
			if strings.Contains(got, "REPLAYED") {
				t.Errorf("replayed history reached the bridge: %q", got)
			}
			var took []string
			for _, l := range r.agentLog("") {
				if w, _, _ := strings.Cut(l, " "); w == "resume" || w == "load" || w == "new" {
					took = append(took, w)
				}
			}
			if want := append([]string{"new"}, c.want...); strings.Join(took, " ") != strings.Join(want, " ") {
				t.Errorf("the harness was asked %q, want %q", took, want)
			}
		})
	}
}

// TestSessionLost: a session the harness can take up neither way is
// replaced by a new one, kept in the file, and the bridge is told.
func TestSessionLost(t *testing.T) {
	r := newRig(t, []string{envCaps + "=resume,load"}, nil)
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	old := r.hub.sessions.get("telegram:1")
	os.Remove(filepath.Join(r.state, old))
	r.restart()
	got := r.message(ctx, "telegram:1", "two", nil).must(t)
	if got != resetNote+"echo: two" {
		t.Errorf("chunks %q, want the reset told, then the answer", got)
	}
	var took []string
	for _, l := range r.agentLog("") {
		if w, _, _ := strings.Cut(l, " "); w == "resume" || w == "load" || w == "new" {
			took = append(took, w)
		}
	}
	if strings.Join(took, " ") != "new resume load new" {
		t.Errorf("the harness was asked %q, want new, resume, load once, new", took)
	}
	b, err := os.ReadFile(r.cfg.Sessions)
	if err != nil {
		t.Fatal(err)
	}
	var doc sessionsDoc
	json.Unmarshal(b, &doc)
	if s := doc.Threads["telegram:1"]; s == old || s == "" {
		t.Errorf("the file keeps %q for the thread, want the new session", s)
	}
}

// TestSessionSlowTakeUp: a kept session the harness doesn't take up
// within the call timeout is no session lost: the turn fails saying so,
// the thread keeps its session (in the file too), and the next message
// takes it up, the conversation going on where it was.
func TestSessionSlowTakeUp(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "slow")
	r := newRig(t, []string{envCaps + "=resume,load", envSlowTake + "=" + slow}, func(c *Config) { c.CallTimeout = 300 * time.Millisecond })
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	old := r.hub.sessions.get("telegram:1")
	os.WriteFile(slow, nil, 0o600)
	r.restart()
	e := r.message(ctx, "telegram:1", "two", nil)
	if e.err == nil || !strings.Contains(e.err.Error(), "no answer within") {
		t.Errorf("a slow take-up was answered %q, %v; want an error saying no answer came in time", e.chunks(), e.err)
	}
	if s := r.hub.sessions.get("telegram:1"); s != old {
		t.Fatalf("after a slow take-up the thread keeps %q, want its session %q", s, old)
	}
	os.Remove(slow)
	if got := r.message(ctx, "telegram:1", "history", nil).must(t); !strings.Contains(got, `"one"`) || strings.Contains(got, resetNote) {
		t.Errorf("the next message was answered %q, want the thread's session's history", got)
	}
}

// TestSessionFileWhole: the file is replaced whole, never written in
// place, and a hub reads what the last one wrote.
func TestSessionFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s", "sessions.json")
	f, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"a", "b", "c"} {
		if err := f.set("telegram:"+string(rune('1'+i)), s); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the one (no temporary left)", len(entries))
	}
	g, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if g.get("telegram:3") != "c" || g.get("telegram:1") != "a" {
		t.Errorf("read back %v", g.threads)
	}
}

// TestSessionFileModels: the model a session was set to is read back by
// the next hub, and let go with its session, whether the thread's session
// is replaced or forgotten.
func TestSessionFileModels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.json")
	f, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{f.set("telegram:1", "a"), f.setModel("a", "small"), f.set("telegram:2", "b"), f.setModel("b", "large")} {
		if step != nil {
			t.Fatal(step)
		}
	}
	g, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if g.model("a") != "small" || g.model("b") != "large" {
		t.Fatalf("read back %v", g.models)
	}
	if err := g.set("telegram:1", "a2"); err != nil {
		t.Fatal(err)
	}
	if err := g.forget("telegram:2", "b"); err != nil {
		t.Fatal(err)
	}
	h, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.models) != 0 {
		t.Errorf("the models of sessions replaced or forgotten are kept: %v", h.models)
	}
}

// TestToolsGiven: Link's tools go with each session the hub makes or
// takes up, as mcpServers over HTTP, and to a harness that takes no MCP
// server over HTTP, none.
func TestToolsGiven(t *testing.T) {
	tools := func(c *Config) {
		c.Tools = []Tool{{Name: "memory", URL: "http://127.0.0.1:9/memory"}, {Name: "web", URL: "http://127.0.0.1:9/web"}}
	}
	want := "mcp: memory=http://127.0.0.1:9/memory web=http://127.0.0.1:9/web"
	r := newRig(t, []string{envCaps + "=resume,mcp"}, tools)
	ctx := testCtx(t, 30*time.Second)
	if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != want {
		t.Errorf("a new session was given %q, want %q", got, want)
	}
	r.restart()
	if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != want {
		t.Errorf("a resumed session was given %q, want %q", got, want)
	}
	r = newRig(t, []string{envCaps + "=resume"}, tools)
	if got := r.message(ctx, "telegram:1", "mcp", nil).must(t); got != "mcp: " {
		t.Errorf("a harness without MCP over HTTP was given %q, want none", got)
	}
}

// preparingStore is the scripted agent's store, its PrepareStart
// written into the agent's own log, so the test reads in one file
// whether the store was asked before the harness started.
type preparingStore struct{ stdioagent.Store }

func (s preparingStore) PrepareStart(ctx context.Context, sessions []string) error {
	f, err := os.OpenFile(filepath.Join(s.Dir, "log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "prepare "+strings.Join(sessions, ","))
	return f.Close()
}

// TestPrepareBeforeStart: a store that is a Preparer readies the files
// of every session the hub keeps before each start of the harness,
// after a restart of the hub and after the harness crashed alike, so the
// harness never sees them unreadied.
func TestPrepareBeforeStart(t *testing.T) {
	r := newRig(t, []string{envCaps + "=load"}, func(c *Config) { c.Store = preparingStore{stdioagent.Store{Dir: c.Dir}} })
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.message(ctx, "telegram:2", "two", nil).must(t)
	one, two := r.hub.sessions.get("telegram:1"), r.hub.sessions.get("telegram:2")
	r.restart()
	r.message(ctx, "telegram:1", "three", nil).must(t)
	r.message(ctx, "telegram:1", "crash", nil) // the harness exits mid-turn
	r.message(ctx, "telegram:2", "four", nil).must(t)
	var took []string
	for _, l := range r.agentLog("") {
		if w, _, _ := strings.Cut(l, " "); w == "initialize" || w == "load" || w == "new" || w == "prepare" {
			took = append(took, l)
		}
	}
	kept := strings.Join(sortedPair(one, two), ",")
	want := []string{"prepare ", "initialize", "new " + one, "new " + two,
		"prepare " + kept, "initialize", "load " + one,
		"prepare " + kept, "initialize", "load " + two}
	if strings.Join(took, "|") != strings.Join(want, "|") {
		t.Errorf("the store and the harness were asked\n%q, want\n%q", took, want)
	}
}

// sortedPair is a and b in order.
func sortedPair(a, b string) []string {
	if b < a {
		return []string{b, a}
	}
	return []string{a, b}
}
