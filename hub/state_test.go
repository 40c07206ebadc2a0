package hub

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/internal/testwait"
)

// stateClient is a connection for the agent state methods, opened as a
// message's is.
func (r *rig) stateClient(ctx context.Context) *acp.Client {
	r.t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.url, Key: r.key, Agent: "main"})
	if err != nil {
		r.t.Fatal(err)
	}
	c := acp.NewClient(context.Background(), f, nil)
	r.t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		r.t.Fatal(err)
	}
	return c
}

func entry(role, text string) contract.StateEntry { return contract.StateEntry{Role: role, Text: text} }

// TestStateThroughStore: with the adapter's store, an export gives each
// thread's conversation as the harness's files keep it, whole; imported
// again it becomes a thread under a new name (the old one keeps a
// session), its session one the harness takes up (the next prompt goes
// on where it was); imported into another hub it keeps its old name.
func TestStateThroughStore(t *testing.T) {
	edit := func(c *Config) { c.Store = stdioagent.Store{Dir: c.Dir} }
	r := newRig(t, []string{envCaps + "=resume,load"}, edit)
	ctx := testCtx(t, 60*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.message(ctx, "telegram:1", "two\nlines", nil).must(t)
	r.message(ctx, "telegram:2", "other", nil).must(t)
	c := r.stateClient(ctx)
	doc, err := c.ExportState(ctx, contract.StateExportParams{Threads: []string{"telegram:1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.StateEntry{entry("user", "one"), entry("agent", "echo: one"), entry("user", "two\nlines"), entry("agent", "echo: two\nlines")}
	if len(doc.Conversations) != 1 || doc.Conversations[0].Thread != "telegram:1" || !reflect.DeepEqual(doc.Conversations[0].Entries, want) {
		t.Fatalf("export: %+v", doc)
	}
	if all, err := c.ExportState(ctx, contract.StateExportParams{}); err != nil || len(all.Conversations) != 2 {
		t.Fatalf("export of every thread: %+v %v", all, err)
	}

	res, err := c.ImportState(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conversations) != 1 || res.Conversations[0] != (contract.ImportedConversation{From: "telegram:1", Thread: "link:import-1"}) {
		t.Fatalf("import: %+v", res)
	}
	if got := r.message(ctx, "link:import-1", "history", nil).must(t); got != `history: "one" | "two\nlines"` {
		t.Errorf("the imported thread's next prompt: %q, want the conversation's history", got)
	}
	again, err := c.ExportState(ctx, contract.StateExportParams{Threads: []string{"link:import-1"}})
	if err != nil || len(again.Conversations) != 1 || !reflect.DeepEqual(again.Conversations[0].Entries[:4], want) {
		t.Errorf("the imported thread exported: %+v %v", again, err)
	}

	other := newRig(t, []string{envCaps + "=load"}, edit)
	res, err = other.stateClient(ctx).ImportState(ctx, doc)
	if err != nil || len(res.Conversations) != 1 || res.Conversations[0].Thread != "telegram:1" {
		t.Fatalf("import into a hub with no telegram:1: %+v %v", res, err)
	}
	if got := other.message(ctx, "telegram:1", "history", nil).must(t); got != `history: "one" | "two\nlines"` {
		t.Errorf("taken up by session/load: %q", got)
	}
}

// TestStateReplayed: with no store, an export replays each session
// through session/load, following session/list's pages when the harness
// has it (a session it doesn't list is gone, and passed over); without
// the list, a session whose load fails is named in the document's
// failed, with why, and the others are given (before, the whole export
// failed); the replayed history reaches no bridge.
func TestStateReplayed(t *testing.T) {
	for _, caps := range []string{"load", "load,list"} {
		t.Run(caps, func(t *testing.T) {
			r := newRig(t, []string{envCaps + "=" + caps}, nil)
			ctx := testCtx(t, 60*time.Second)
			r.message(ctx, "telegram:1", "one", nil).must(t)
			r.message(ctx, "telegram:2", "two", nil).must(t)
			r.message(ctx, "telegram:4", "four", nil).must(t)
			gone := r.hub.sessions.get("telegram:2")
			os.Remove(r.state + "/" + gone)
			r.hub.sessions.set("telegram:3", "s-never")
			doc, err := r.stateClient(ctx).ExportState(ctx, contract.StateExportParams{})
			if err != nil {
				t.Fatal(err)
			}
			want := []contract.StateEntry{entry("user", `REPLAYED "one"`), entry("agent", `REPLAYED answer to "one"`)}
			if len(doc.Conversations) != 2 || doc.Conversations[0].Thread != "telegram:1" || doc.Conversations[1].Thread != "telegram:4" || !reflect.DeepEqual(doc.Conversations[0].Entries, want) {
				t.Fatalf("export: %+v", doc)
			}
			if caps == "load" {
				// Without a list, a session the harness can't load is
				// named failed, and why; the others are given.
				if len(doc.Failed) != 2 || !strings.Contains(doc.Failed["telegram:2"], "session/load") || !strings.Contains(doc.Failed["telegram:3"], "session/load") {
					t.Fatalf("export's failed: %q", doc.Failed)
				}
				return
			}
			if len(doc.Failed) != 0 {
				t.Errorf("sessions gone from the list named failed: %q", doc.Failed)
			}
			if len(r.agentLog("list")) < 2 {
				t.Errorf("session/list's pages were not followed: %q", r.agentLog("list"))
			}
			if got := r.message(ctx, "telegram:1", "next", nil).must(t); got != "echo: next" {
				t.Errorf("after the export the thread answers %q", got)
			}
		})
	}
}

// TestStateReplayedClosed: a session an export loaded to replay it,
// in a harness that offers session/close, is closed once idle as a
// thread's is (an agent may keep a process for each session it holds),
// and the thread's next message takes it up again.
func TestStateReplayedClosed(t *testing.T) {
	r := newRig(t, []string{envCaps + "=load,close"}, func(c *Config) { c.IdleClose = 300 * time.Millisecond })
	ctx := testCtx(t, 60*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	session := r.hub.sessions.get("telegram:1")
	r.restart()
	if _, err := r.stateClient(ctx).ExportState(ctx, contract.StateExportParams{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, "the replayed session closed", func() bool { return slices.Contains(r.agentLog("close "), "close "+session) })
	if got := r.message(ctx, "telegram:1", "history", nil).must(t); got != `history: "one"` {
		t.Errorf("after its replayed session was closed the thread answers %q", got)
	}
}

// TestStateStoreFailsOne: a thread whose session's files the store
// refuses is named in the export's failed, with why, and every other
// thread's conversation is given.
func TestStateStoreFailsOne(t *testing.T) {
	r := newRig(t, []string{envCaps + "=resume"}, func(c *Config) { c.Store = stdioagent.Store{Dir: c.Dir} })
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.message(ctx, "telegram:2", "two", nil).must(t)
	if err := os.WriteFile(r.state+"/"+r.hub.sessions.get("telegram:2")+".entries", []byte("not JSON\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, err := r.stateClient(ctx).ExportState(ctx, contract.StateExportParams{})
	if err != nil {
		t.Fatalf("one thread's refused files failed the whole export: %v", err)
	}
	if len(doc.Conversations) != 1 || doc.Conversations[0].Thread != "telegram:1" || len(doc.Conversations[0].Entries) != 2 {
		t.Fatalf("export: %+v", doc)
	}
	if why := doc.Failed["telegram:2"]; len(doc.Failed) != 1 || !strings.Contains(why, "its session's files") || !strings.Contains(why, "invalid character") {
		t.Fatalf("export's failed: %q", doc.Failed)
	}
}

// TestStateReplayedLate: an export by replay waits for history a
// harness replays after it answered session/load (Gemini CLI 0.61.0
// does), as a thread's turn after a load does: every entry is in it.
func TestStateReplayedLate(t *testing.T) {
	r := newRig(t, []string{envCaps + "=load", envLateReplay + "=1"}, nil)
	ctx := testCtx(t, 60*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	r.message(ctx, "telegram:1", "two", nil).must(t)
	r.restart()
	doc, err := r.stateClient(ctx).ExportState(ctx, contract.StateExportParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.StateEntry{entry("user", `REPLAYED "one"`), entry("agent", `REPLAYED answer to "one"`), entry("user", `REPLAYED "two"`), entry("agent", `REPLAYED answer to "two"`)}
	if len(doc.Conversations) != 1 || !reflect.DeepEqual(doc.Conversations[0].Entries, want) {
		t.Fatalf("export: %+v, want %+v", doc, want)
	}
}

// TestStateNone: a harness with neither a store nor session/load gives
// and takes none, kind by kind, and an import changes nothing.
func TestStateNone(t *testing.T) {
	r := newRig(t, []string{envCaps + "=resume"}, nil)
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	c := r.stateClient(ctx)
	doc, err := c.ExportState(ctx, contract.StateExportParams{})
	if err != nil || len(doc.Conversations) != 0 || doc.Refused[contract.StateKindConversations] == "" {
		t.Fatalf("export: %+v %v", doc, err)
	}
	before, _ := os.ReadFile(r.cfg.Sessions)
	res, err := c.ImportState(ctx, contract.StateDocument{Version: 1, Conversations: []contract.StateConversation{{Thread: "telegram:9", Entries: []contract.StateEntry{entry("user", "hi")}}}})
	if err != nil || len(res.Conversations) != 0 || res.Refused[contract.StateKindConversations] == "" {
		t.Fatalf("import: %+v %v", res, err)
	}
	if after, _ := os.ReadFile(r.cfg.Sessions); string(after) != string(before) {
		t.Errorf("an import taken by none changed the sessions: %s -> %s", before, after)
	}
}

// TestStateRefused: a malformed or oversized import is refused naming
// the rule, and changes nothing; the connection goes on.
func TestStateRefused(t *testing.T) {
	edit := func(c *Config) { c.Store = stdioagent.Store{Dir: c.Dir} }
	r := newRig(t, []string{envCaps + "=resume,load"}, edit)
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	before, _ := os.ReadFile(r.cfg.Sessions)
	files, _ := os.ReadDir(r.state)
	c := r.stateClient(ctx)
	big := `{"version":1,"conversations":[{"thread":"telegram:5","entries":[{"role":"user","text":"` + strings.Repeat("a", contract.MaxStateDocument) + `"}]}]}`
	for _, doc := range []string{
		`{"version":1,"conversations":[{"thread":"telegram:5","entries":[{"role":"user","text":"a"}]},{"thread":"irc:1","entries":[{"role":"user","text":"a"}]}]}`,
		`{"version":3,"conversations":[]}`,
		big,
	} {
		_, err := c.Conn().Call(ctx, contract.MethodStateImport, json.RawMessage(doc))
		var rpc *acp.Error
		if err == nil || !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams {
			t.Errorf("%.60s: %v, want invalid params", doc, err)
		}
	}
	if after, _ := os.ReadFile(r.cfg.Sessions); string(after) != string(before) {
		t.Errorf("a refused import changed the sessions: %s -> %s", before, after)
	}
	if now, _ := os.ReadDir(r.state); len(now) != len(files) {
		t.Errorf("a refused import wrote the harness's files: %d -> %d", len(files), len(now))
	}
	if doc, err := c.ExportState(ctx, contract.StateExportParams{}); err != nil || len(doc.Conversations) != 1 {
		t.Errorf("the connection after the refusals: %+v %v", doc, err)
	}
}

// TestStateExportThreadTwice: an export naming a thread twice is refused
// naming the rule; it gave a document holding that thread twice, which
// breaks the document's rule (each thread once), so no import took it.
func TestStateExportThreadTwice(t *testing.T) {
	edit := func(c *Config) { c.Store = stdioagent.Store{Dir: c.Dir} }
	r := newRig(t, []string{envCaps + "=resume,load"}, edit)
	ctx := testCtx(t, 30*time.Second)
	r.message(ctx, "telegram:1", "one", nil).must(t)
	raw, err := r.stateClient(ctx).Conn().Call(ctx, contract.MethodStateExport, json.RawMessage(`{"threads":["telegram:1","telegram:1"]}`))
	var rpc *acp.Error
	if !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams || !strings.Contains(rpc.Message, "once") {
		t.Errorf("an export naming telegram:1 twice was answered %.200s, %v; want invalid params naming the rule", raw, err)
	}
}

// TestStateBetweenTurns: an export waits for the turns running to end,
// and a turn that outlasts the wait has it refused; the turn is left to
// run.
func TestStateBetweenTurns(t *testing.T) {
	edit := func(c *Config) {
		c.Store = stdioagent.Store{Dir: c.Dir}
		c.StateWait = 300 * time.Millisecond
	}
	r := newRig(t, []string{envCaps + "=resume,load"}, edit)
	ctx := testCtx(t, 60*time.Second)
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	done := make(chan *exchange, 1)
	go func() { done <- s.prompt(ctx, "wait", nil) }()
	if err := s.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	c := r.stateClient(ctx)
	_, err = c.ExportState(ctx, contract.StateExportParams{})
	if err == nil || !strings.Contains(err.Error(), "only between turns") {
		t.Fatalf("export during a turn: %v", err)
	}
	s.c.Cancel(ctx, "telegram:1")
	<-done

	// A turn that ends within the wait: the export waits, and has it.
	r.cfg.StateWait = 30 * time.Second
	r.restart()
	c = r.stateClient(ctx)
	s2, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.close()
	go func() { done <- s2.prompt(ctx, "slow", nil) }()
	// Told taken, the turn runs: it began before it was told.
	for !s2.told(contract.MethodTaken) {
		select {
		case <-s2.seen:
		case <-ctx.Done():
			t.Fatal("the slow prompt was never taken")
		}
	}
	doc, err := c.ExportState(ctx, contract.StateExportParams{})
	if err != nil {
		t.Fatal(err)
	}
	es := doc.Conversations[0].Entries
	if last := es[len(es)-1]; last.Text != "slow done" {
		t.Errorf("the export didn't wait for the turn: it ends %+v", last)
	}
	<-done
}

// told says whether a notification of method came.
func (s *session) told(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes {
		if n.method == method {
			return true
		}
	}
	return false
}
