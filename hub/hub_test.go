package hub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// TestPromptAnswered: a prompt reaches the harness in the thread's
// session and its answer streams back under the thread's name, told taken
// first.
func TestPromptAnswered(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	e := r.message(ctx, "telegram:42", "hello there", nil)
	if got, want := e.must(t), "echo: hello there"; got != want {
		t.Errorf("chunks %q, want %q", got, want)
	}
	if len(e.notes) == 0 || e.notes[0].method != contract.MethodTaken {
		t.Fatalf("the first note is not _link/taken: %v", e.notes)
	}
	for _, n := range e.notes {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(n.params, &p)
		if p.SessionID != "telegram:42" {
			t.Errorf("%s came under session %q, want the thread's name", n.method, p.SessionID)
		}
	}
	var res acp.PromptResult
	if json.Unmarshal(e.result, &res); res.StopReason != acp.StopEndTurn {
		t.Errorf("answered %s, want end_turn", e.result)
	}
	if err := r.hub.Health(ctx); err != nil {
		t.Errorf("health: %v", err)
	}
}

// TestUnknownUpdatesPassThrough: an update of a kind ACP doesn't have,
// and fields it doesn't have, reach the bridge as the harness sent them.
func TestUnknownUpdatesPassThrough(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := testCtx(t, 20*time.Second)
	e := r.message(ctx, "telegram:1", "unknown", nil)
	e.must(t)
	var got []string
	for _, n := range e.notes {
		if n.method == acp.MethodSessionUpdate {
			got = append(got, string(n.params))
		}
	}
	want := []string{
		`{"extra":"kept","sessionId":"telegram:1","update":{"sessionUpdate":"future_kind","x":{"y":[1,2]},"_meta":{"z":true}}}`,
		`{"sessionId":"telegram:1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"<b>&</b>","annotations":{"priority":1}},"messageId":"m1","novel":{"a":null}}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("updates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
