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

// TestTSSessionTakenUp: after a restart of the hub (and of the agent
// behind it), a thread's session is taken up by session/resume where
// the agent on the TypeScript SDK offers it (never session/load, which
// it offers too), by session/load where that is all it offers, and is
// begun anew, the thread told, where it offers neither.
func TestTSSessionTakenUp(t *testing.T) {
	for _, c := range []struct {
		caps, took string
	}{
		{"resume,load", acp.MethodSessionResume},
		{"load", acp.MethodSessionLoad},
		{"", ""},
	} {
		t.Run("caps="+c.caps, func(t *testing.T) {
			r := newTSRig(t, c.caps, nil, nil)
			ctx := testCtx(t, 60*time.Second)
			if got := r.message(ctx, "telegram:1", "one", nil).must(t); got != "heard oneturn 1" {
				t.Fatalf("answered %q", got)
			}
			first := r.hub.sessions.get("telegram:1")
			r.restart()
			got := r.message(ctx, "telegram:1", "two", nil).must(t)
			resumed, loaded := r.tsLog(acp.MethodSessionResume), r.tsLog(acp.MethodSessionLoad)
			switch c.took {
			case acp.MethodSessionResume:
				if got != "heard twoturn 2" || len(resumed) != 1 || resumed[0].sessionOf() != first || len(loaded) != 0 {
					t.Errorf("answered %q after a restart; resumed %d, loaded %d, want one resume of %s", got, len(resumed), len(loaded), first)
				}
			case acp.MethodSessionLoad:
				if got != "heard twoturn 2" || len(loaded) != 1 || loaded[0].sessionOf() != first || len(resumed) != 0 {
					t.Errorf("answered %q after a restart; resumed %d, loaded %d, want one load of %s", got, len(resumed), len(loaded), first)
				}
			default:
				if got != resetNote+"heard twoturn 1" || len(r.tsLog(acp.MethodSessionNew)) != 2 {
					t.Errorf("answered %q after a restart, want the thread told it starts anew in a new session", got)
				}
			}
		})
	}
}

// TestTSSessionClosedWhenDropped: a session the hub lets go (the chat's
// /new went to the agent as its /clear) is closed with session/close
// where the agent offers close, and the thread's next message begins a
// new one; an agent that doesn't offer it is never sent session/close.
func TestTSSessionClosedWhenDropped(t *testing.T) {
	actions := append([]Action(nil), chatActions...)
	actions[0].NewSession = true
	for _, caps := range []string{"resume,close", "resume"} {
		t.Run("caps="+caps, func(t *testing.T) {
			r := newTSRig(t, caps, nil, func(c *Config) { c.Actions = actions })
			ctx := testCtx(t, 60*time.Second)
			r.message(ctx, "telegram:1", "one", nil).must(t)
			first := r.hub.sessions.get("telegram:1")
			if got := r.message(ctx, "telegram:1", "/new", nil).must(t); got != "cleared" {
				t.Fatalf("/new answered %q", got)
			}
			if got := r.message(ctx, "telegram:1", "two", nil).must(t); got != "heard twoturn 1" {
				t.Fatalf("after /new answered %q, want a new session's first turn", got)
			}
			closed := r.tsLog(acp.MethodSessionClose)
			if caps == "resume,close" && (len(closed) != 1 || closed[0].sessionOf() != first) {
				t.Errorf("closed %v, want the session let go, %s, once", closed, first)
			}
			if caps == "resume" && len(closed) != 0 {
				t.Errorf("an agent offering no close was sent %d session/close", len(closed))
			}
		})
	}
}

// TestTSModelPicker: a prompt's _meta.link.model is set through the
// agent's config option of category model (its id "pick", not "model")
// with session/set_config_option, named by a value, a value after a
// provider's prefix, or a value's name; asked again it is not set again;
// one the agent doesn't offer is refused naming those it does, the agent
// never sent the prompt; after a restart, the session resumed on the
// agent's default is set to its model again. An agent with no picker is
// sent no set_config_option: the model reaches it in the prompt's _meta.
func TestTSModelPicker(t *testing.T) {
	meta := func(model string) json.RawMessage {
		return json.RawMessage(`{"link":{"model":"` + model + `"}}`)
	}
	t.Run("picker", func(t *testing.T) {
		r := newTSRig(t, "resume,model", nil, nil)
		ctx := testCtx(t, 60*time.Second)
		if got := r.message(ctx, "telegram:1", "model", meta("large-2")).must(t); got != "model: large-2" {
			t.Fatalf("asked for large-2, answered %q", got)
		}
		for _, m := range []string{"large-two", "deep/large-2", "large-2"} {
			if got := r.message(ctx, "telegram:1", "model", meta(m)).must(t); got != "model: large-2" {
				t.Fatalf("asked for %s, answered %q", m, got)
			}
		}
		if got := r.message(ctx, "telegram:1", "model", meta("small")).must(t); got != "model: small" {
			t.Fatalf("asked for small, answered %q", got)
		}
		if got := r.message(ctx, "telegram:1", "model", nil).must(t); got != "model: small" {
			t.Fatalf("with no model asked, answered %q", got)
		}
		sets := r.tsLog(acp.MethodSetConfigOption)
		var values []string
		for _, s := range sets {
			var p struct{ ConfigID, Value string }
			json.Unmarshal(s.Params, &p)
			values = append(values, p.ConfigID+"="+p.Value)
		}
		if strings.Join(values, " ") != "pick=large-2 pick=small" {
			t.Errorf("set_config_option sent %q, want pick=large-2 then pick=small alone", values)
		}
		prompts := len(r.tsLog(acp.MethodSessionPrompt))
		e := r.message(ctx, "telegram:1", "model", meta("huge"))
		var rpcErr *acp.Error
		if e.err == nil || !errors.As(e.err, &rpcErr) || rpcErr.Code != acp.CodeInvalidParams || !strings.Contains(rpcErr.Message, "small, large-2") {
			t.Errorf("a model the agent doesn't offer was answered %v, want a refusal naming small and large-2", e.err)
		}
		if n := len(r.tsLog(acp.MethodSessionPrompt)); n != prompts {
			t.Error("the agent was sent the prompt of a refused model")
		}
		r.message(ctx, "telegram:1", "model", meta("large-2")).must(t)
		r.restart()
		if got := r.message(ctx, "telegram:1", "model", nil).must(t); got != "model: large-2" {
			t.Errorf("after a restart the session runs on %q, want large-2 set again", got)
		}
	})
	t.Run("no picker", func(t *testing.T) {
		r := newTSRig(t, "resume", nil, nil)
		ctx := testCtx(t, 60*time.Second)
		if got := r.message(ctx, "telegram:1", "model", meta("large-2")).must(t); got != "model: none" {
			t.Fatalf("answered %q", got)
		}
		if n := len(r.tsLog(acp.MethodSetConfigOption)); n != 0 {
			t.Errorf("an agent with no model picker was sent %d set_config_option", n)
		}
		prompts := r.tsLog(acp.MethodSessionPrompt)
		if len(prompts) != 1 || !strings.Contains(string(prompts[0].Params), `"model":"large-2"`) {
			t.Errorf("the prompt's _meta.link.model didn't reach the agent: %v", prompts)
		}
	})
}

// TestTSMessageIDsAndUsage: chunks an agent marks with messageIds reach
// the bridge with them, a new message's first chunk set apart from the
// last message ("\n\n", as Link Harness sets apart a turn's rounds), and
// its usage_update (context used, its size, cost) reaches the bridge as
// it came, under the thread's name; an agent marking none has its chunks
// joined as they came.
func TestTSMessageIDsAndUsage(t *testing.T) {
	for _, caps := range []string{"ids", ""} {
		t.Run("caps="+caps, func(t *testing.T) {
			r := newTSRig(t, caps, nil, nil)
			ctx := testCtx(t, 60*time.Second)
			e := r.message(ctx, "telegram:1", "one", nil)
			got := e.must(t)
			var ids []string
			var usage []json.RawMessage
			for _, n := range e.notes {
				var p struct {
					SessionID string `json:"sessionId"`
					Update    struct {
						Kind      string `json:"sessionUpdate"`
						MessageID string `json:"messageId"`
					} `json:"update"`
				}
				json.Unmarshal(n.params, &p)
				switch p.Update.Kind {
				case acp.UpdateMessageChunk:
					ids = append(ids, p.Update.MessageID)
				case acp.UpdateUsage:
					if p.SessionID != "telegram:1" {
						t.Errorf("usage_update under %q", p.SessionID)
					}
					usage = append(usage, n.params)
				}
			}
			if caps == "" {
				if got != "heard oneturn 1" || len(usage) != 0 {
					t.Errorf("answered %q with %d usage_update", got, len(usage))
				}
				return
			}
			if got != "heard one\n\nturn 1" || strings.Join(ids, " ") != "m1a m1a m1b" {
				t.Errorf("answered %q, chunks' messageIds %q", got, ids)
			}
			if len(usage) != 1 || !strings.Contains(string(usage[0]), `"used":100,"size":1000,"cost":{"amount":0.25,"currency":"USD"}`) {
				t.Errorf("usage_update reached the bridge as %s", usage)
			}
		})
	}
}

// TestTSCancelRequest: a call the hub gives up on is cancelled with
// $/cancel_request: a session/resume not answered within the call
// timeout (the thread keeps its session) and a prompt whose turn failed
// on the hub's side (a line past the limit), the agent on the TypeScript
// SDK seeing its request's signal aborted with -32800; a permission the
// agent cancels as it asks is answered once, and the agent goes on.
func TestTSCancelRequest(t *testing.T) {
	t.Run("resume given up on", func(t *testing.T) {
		// The call timeout bounds node's start too, slow on a loaded machine.
		r := newTSRig(t, "resume", []string{"HUB_TS_HANG_RESUME=1"}, func(c *Config) { c.CallTimeout = 5 * time.Second })
		ctx := testCtx(t, 60*time.Second)
		r.message(ctx, "telegram:1", "one", nil).must(t)
		r.restart()
		if e := r.message(ctx, "telegram:1", "two", nil); e.err == nil || !strings.Contains(e.err.Error(), "no answer within") {
			t.Fatalf("a resume never answered gave %v", e.err)
		}
		testwait.For(t, 20*time.Second, "the resume's request cancelled", func() bool { return aborted(r, acp.MethodSessionResume) })
	})
	t.Run("prompt cut short", func(t *testing.T) {
		r := newTSRig(t, "", nil, func(c *Config) { c.MaxLine = 64 << 10 })
		ctx := testCtx(t, 60*time.Second)
		if e := r.message(ctx, "telegram:1", "big", nil); e.err == nil || !strings.Contains(e.err.Error(), "longer than") {
			t.Fatalf("a turn past the line limit gave %v", e.err)
		}
		testwait.For(t, 20*time.Second, "the prompt's request cancelled", func() bool { return aborted(r, acp.MethodSessionPrompt) })
		testwait.For(t, 20*time.Second, "the turn's session/cancel", func() bool { return len(r.tsLog(acp.MethodSessionCancel)) == 1 })
		if got := r.message(ctx, "telegram:1", "one", nil).must(t); got != "heard oneturn 1" {
			t.Errorf("the agent answered %q after", got)
		}
	})
	t.Run("permission the agent cancels", func(t *testing.T) {
		r := newTSRig(t, "", nil, nil)
		ctx := testCtx(t, 60*time.Second)
		if got := r.message(ctx, "telegram:1", "permission", nil).must(t); got != "permission: selected" {
			t.Errorf("answered %q", got)
		}
		if n := len(r.tsLog("permission answered")); n != 1 {
			t.Errorf("the permission was answered %d times", n)
		}
		if got := r.message(ctx, "telegram:1", "one", nil).must(t); got != "heard oneturn 1" {
			t.Errorf("the agent answered %q after", got)
		}
	})
}

// aborted says whether the TypeScript agent saw a request of method
// cancelled by $/cancel_request (its signal aborted with -32800).
func aborted(r *rig, method string) bool {
	for _, e := range r.tsLog("aborted") {
		if e.What == method && e.Code != nil && *e.Code == acp.CodeRequestCancelled {
			return true
		}
	}
	return false
}

// TestCancelRequestFromBridge: a bridge's $/cancel_request of its running
// prompt cancels the turn as session/cancel does: the harness is sent
// session/cancel, the permissions it asks from then on are answered
// cancelled, and the prompt is answered stopReason cancelled.
func TestCancelRequestFromBridge(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 30*time.Second)
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	answered := make(chan *exchange, 1)
	go func() { answered <- s.prompt(ctx, "wait", nil) }() // the client's third request
	if err := s.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	if err := s.c.Conn().Notify(ctx, acp.MethodCancelRequest, json.RawMessage(`{"requestId":3}`)); err != nil {
		t.Fatal(err)
	}
	e := <-answered
	var res acp.PromptResult
	if got := e.must(t); json.Unmarshal(e.result, &res) != nil || res.StopReason != acp.StopCancelled || !strings.Contains(got, "permission cancelled") {
		t.Errorf("a prompt cancelled by $/cancel_request answered %s, streamed %q", e.result, got)
	}
}
