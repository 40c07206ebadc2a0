package hub

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/internal/testwait"
)

// TestBadInputFromHarness: a line that isn't JSON, a response to no
// request, a request and a notification the hub doesn't know: each is
// answered or dropped, and the turn goes on in the same harness.
func TestBadInputFromHarness(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	if got := r.message(ctx, "telegram:1", "garbage", nil).must(t); got != "still here" {
		t.Errorf("chunks %q, want %q", got, "still here")
	}
	if got := r.message(ctx, "telegram:1", "again", nil).must(t); got != "echo: again" {
		t.Errorf("chunks %q after the bad input, want the echo", got)
	}
	if n := len(r.agentLog("initialize")); n != 1 {
		t.Errorf("the harness was started %d times, want once", n)
	}
}

// TestPermissionAnswered: a permission is given at once with the first
// option that allows, passing over bypassPermissions.
func TestPermissionAnswered(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	if got, want := r.message(ctx, "telegram:1", "permission", nil).must(t), "given acceptEdits"; got != want {
		t.Errorf("chunks %q, want %q", got, want)
	}
}

func TestFirstAllow(t *testing.T) {
	for _, c := range []struct {
		opts []PermissionOption
		want string
	}{
		{[]PermissionOption{{"no", "", "reject_once"}, {"yes", "", "allow_once"}, {"always", "", "allow_always"}}, "yes"},
		{[]PermissionOption{{bypassPermissions, "", "allow_always"}, {"acceptEdits", "", "allow_always"}}, "acceptEdits"},
		{[]PermissionOption{{bypassPermissions, "", "allow_always"}, {"plan", "", "reject_once"}}, bypassPermissions},
		{[]PermissionOption{{"no", "", "reject_always"}}, ""},
	} {
		got, ok := FirstAllow(c.opts)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FirstAllow(%v) = %q, %v; want %q", c.opts, got, ok, c.want)
		}
	}
}

// TestCancel: two cancels of a running turn send the harness exactly one
// session/cancel, and a permission asked after it is answered cancelled.
func TestCancel(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	answered := make(chan *exchange, 1)
	go func() { answered <- s.prompt(ctx, "wait", nil) }()
	if err := s.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	s.c.Cancel(ctx, "telegram:1")
	s.c.Cancel(ctx, "telegram:1")
	e := <-answered
	if got := e.must(t); got != "waitingpermission cancelled" {
		t.Errorf("chunks %q, want the permission asked after the cancel cancelled", got)
	}
	var res acp.PromptResult
	if json.Unmarshal(e.result, &res); res.StopReason != acp.StopCancelled {
		t.Errorf("answered %s, want cancelled", e.result)
	}
	if got := r.agentLog("cancel "); len(got) != 1 {
		t.Errorf("the harness was sent %d session/cancel (%q), want 1", len(got), got)
	}
}

// TestBigFrames: a 20 MiB line from the agent (its chunk cut at what a
// bridge reads, TestChunkPastBridgeLimit) and a 5 MiB prompt pass; past
// the line cap, that thread's turn fails and the hub and its harness go
// on.
func TestBigFrames(t *testing.T) {
	if raceOn {
		t.Skip("20 MiB through the race detector takes minutes; the run without it checks this")
	}
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 60*time.Second)
	if got := r.message(ctx, "telegram:1", "big 20971520", nil).must(t); len(got) > maxAnswerText || !strings.HasSuffix(got, keptCutNote) {
		t.Errorf("a 20 MiB chunk came as %d bytes, want it cut", len(got))
	}
	long := strings.Repeat("b", 5<<20)
	if got := r.message(ctx, "telegram:1", long, nil).must(t); got != "echo: "+long {
		t.Errorf("a 5 MiB prompt's echo came as %d bytes", len(got))
	}

	r = newRig(t, nil, func(c *Config) { c.MaxLine = 1 << 20 })
	e := r.message(ctx, "telegram:2", "big 2000000", nil)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || !strings.Contains(rpcErr.Message, "longer than") {
		t.Fatalf("a line past the cap was answered %v, want an error saying it was too long", e.err)
	}
	// The turn given up on is cancelled: the next is sent once the harness
	// has the cancel, which an agent handling its messages at once (as
	// the fake's SDK does) could otherwise apply to the next prompt.
	testwait.For(t, 10*time.Second, "the harness told of the cancel", func() bool { return len(r.agentLog("cancel ")) == 1 })
	if got := r.message(ctx, "telegram:2", "next", nil).must(t); got != "echo: next" {
		t.Errorf("after a line past the cap: %q", got)
	}
	if n := len(r.agentLog("initialize")); n != 1 {
		t.Errorf("the harness was started %d times, want once", n)
	}
}

// TestFromOthers: a message from someone other than the owner reaches the
// harness with who it is written into its text and its lines quoted, its
// _meta as it came; a sender that isn't one is refused before the harness
// sees it.
func TestFromOthers(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	meta := json.RawMessage(`{"link":{"from":"person:telegram:42","fromName":"Alice","hops":2}}`)
	got := r.message(ctx, "telegram:1", "hi\nthere", meta).must(t)
	want := "echo: Message from Alice (person:telegram:42), hops 2:\n> hi\n> there meta:{\"from\":\"person:telegram:42\",\"fromName\":\"Alice\",\"hops\":2}"
	if got != want {
		t.Errorf("chunks\n%q\nwant\n%q", got, want)
	}
	before := len(r.agentLog("prompt "))
	e := r.message(ctx, "telegram:1", "hi", json.RawMessage(`{"link":{"from":"nobody:1"}}`))
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || rpcErr.Code != acp.CodeInvalidParams {
		t.Fatalf("a bad sender was answered %v, want invalid params", e.err)
	}
	if n := len(r.agentLog("prompt ")); n != before {
		t.Errorf("the harness saw the refused message")
	}
}

// TestOneTurnAtATime: a thread's second prompt is forwarded only once its
// first has ended, while another thread's runs beside it.
func TestOneTurnAtATime(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	first := make(chan *exchange, 1)
	go func() { first <- r.message(ctx, "telegram:1", "slow", nil) }()
	testwait.For(t, 20*time.Second, "the harness to see the prompt", func() bool { return len(r.agentLog("prompt ")) == 1 })
	other := r.message(ctx, "telegram:2", "other", nil)
	second := r.message(ctx, "telegram:1", "second", nil)
	(<-first).must(t)
	other.must(t)
	second.must(t)
	var got []string
	for _, l := range r.agentLog("") {
		if w, rest, _ := strings.Cut(l, " "); w == "prompt" || w == "end" {
			_, text, _ := strings.Cut(rest, " ")
			got = append(got, w+" "+text)
		}
	}
	want := []string{`prompt "slow"`, `prompt "other"`, `end "other"`, `end "slow"`, `prompt "second"`, `end "second"`}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("the harness saw %q, want %q", got, want)
	}
}

// TestCancelQueued: a prompt cancelled while it waits for its thread's
// turn (another connection's turn running there) is answered cancelled
// and never reaches the harness; the thread goes on after.
func TestCancelQueued(t *testing.T) {
	queued := make(chan string, 4)
	queuedHook = func(thread string) { queued <- thread }
	t.Cleanup(func() { queuedHook = nil })
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	s1, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s1.close()
	s2, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.close()
	first := make(chan *exchange, 1)
	go func() { first <- s1.prompt(ctx, "wait", nil) }()
	if err := s1.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	<-queued // the first prompt's, running now
	second := make(chan *exchange, 1)
	go func() { second <- s2.prompt(ctx, "queued behind", nil) }()
	<-queued // the second's, waiting for the thread's turn
	s2.c.Cancel(ctx, "telegram:1")
	s1.c.Cancel(ctx, "telegram:1") // the running turn ends
	(<-first).must(t)
	e := <-second
	if e.err != nil {
		t.Fatalf("the prompt cancelled while queued: %v, want answered cancelled", e.err)
	}
	var res acp.PromptResult
	if json.Unmarshal(e.result, &res); res.StopReason != acp.StopCancelled {
		t.Errorf("the prompt cancelled while queued was answered %s, want cancelled", e.result)
	}
	for _, l := range r.agentLog("prompt ") {
		if strings.Contains(l, "queued behind") {
			t.Errorf("the harness was sent the prompt cancelled while queued: %s", l)
		}
	}
	if got := r.message(ctx, "telegram:1", "after", nil).must(t); got != "echo: after" {
		t.Errorf("the thread's next message: %q", got)
	}
}
