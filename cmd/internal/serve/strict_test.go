package serve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// testKey is the endpoint key of the tests' servers.
var testKey = []byte("serve-test-key-0123456789")

// startServed starts a harness on a fresh home, answered by the offline
// model, and returns it with its home; it is closed when the test ends.
func startServed(t *testing.T, edit func(*Config)) (*Server, string) {
	t.Helper()
	home := t.TempDir()
	cfg := Config{Home: home, Key: testKey, Model: scripted.OfflineName}
	if edit != nil {
		edit(&cfg)
	}
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, home
}

// dialThread opens a connection to s, initialized, with thread resumed.
func dialThread(t *testing.T, s *Server, thread string) *acp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: s.URL(), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	c := acp.NewClient(t.Context(), conn, nil)
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if thread != "" {
		if err := c.Resume(ctx, thread); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// wantInvalidParams fails unless err is JSON-RPC's invalid params with a
// message holding rule.
func wantInvalidParams(t *testing.T, what string, err error, rule string) {
	t.Helper()
	var e *acp.Error
	if !errors.As(err, &e) || e.Code != acp.CodeInvalidParams || !strings.Contains(e.Message, rule) {
		t.Errorf("%s: got %v, want invalid params (%d) saying %q", what, err, acp.CodeInvalidParams, rule)
	}
}

// wantNothingStored fails if the conversation of thread has a folder.
func wantNothingStored(t *testing.T, home, thread string) {
	t.Helper()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); !errors.Is(err, os.ErrNotExist) {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s: refused, yet its folder holds %v (%v)", thread, names, err)
	}
}

// prompt sends a session/prompt with raw params, as a client may.
func prompt(ctx context.Context, c *acp.Client, params string) error {
	_, err := c.Conn().Call(ctx, acp.MethodSessionPrompt, json.RawMessage(params))
	return err
}

// TestPromptRefusals: what a bad prompt costs a user: a refusal naming
// its rule, as invalid params, and nothing stored of it.
func TestPromptRefusals(t *testing.T) {
	s, home := startServed(t, nil)
	ctx := t.Context()
	for _, tc := range []struct{ name, thread, params, rule string }{
		{"empty prompt", "link:empty", `{"sessionId":"link:empty","prompt":[]}`, "at least one content block"},
		{"fromName invalid UTF-8", "link:utf", "{\"sessionId\":\"link:utf\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}],\"_meta\":{\"link\":{\"from\":\"person:telegram:7\",\"fromName\":\"Gr\xffce\"}}}", "plain UTF-8"},
		{"fromName lone surrogate", "link:sur", `{"sessionId":"link:sur","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"from":"person:telegram:7","fromName":"Gr\udc00ce"}}}`, "plain UTF-8"},
		{"fromName right-to-left override", "link:rlo", `{"sessionId":"link:rlo","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"from":"person:telegram:7","fromName":"Grace\u202egnp.exe"}}}`, "format character (U+202E)"},
		{"fromName zero-width space", "link:zws", `{"sessionId":"link:zws","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"from":"person:telegram:7","fromName":"Gr\u200bace"}}}`, "format character (U+200B)"},
		{"fromName control", "link:ctl", `{"sessionId":"link:ctl","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"from":"person:telegram:7","fromName":"Gr\u0007ace"}}}`, "control character"},
		{"/model:set no provider serves", "link:set", `{"sessionId":"link:set","prompt":[{"type":"text","text":"/model:set ../../etc/passwd"}]}`, "no provider for the model"},
		{"_meta.link.model no provider serves", "link:meta", `{"sessionId":"link:meta","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"model":"../../etc/passwd"}}}`, "no provider for the model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialThread(t, s, tc.thread)
			wantInvalidParams(t, tc.name, prompt(ctx, c, tc.params), tc.rule)
			wantNothingStored(t, home, tc.thread)
		})
	}
	// The model the harness does serve is still taken.
	c := dialThread(t, s, "link:ok")
	if err := prompt(ctx, c, `{"sessionId":"link:ok","prompt":[{"type":"text","text":"/model:set offline"}]}`); err != nil {
		t.Fatalf("/model:set offline: %v", err)
	}
}

// TestRecoverUnknownKey: a misspelt two_phase is refused naming the
// rule, and the answer waiting is not handed over: the two-phase ask
// after it still gets it.
func TestRecoverUnknownKey(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	f := &delivery.Answers{Paths: p}
	if _, err := f.Keep(t.Context(), "telegram:42", "the answer nobody took", time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	s, _ := startServed(t, func(c *Config) { c.Home = home })
	c := dialThread(t, s, "")
	ctx := t.Context()
	_, err = c.Conn().Call(ctx, contract.MethodRecover, json.RawMessage(`{"twophase":true}`))
	wantInvalidParams(t, "recover {twophase}", err, `"twophase" is not one of _link/recover's params: two_phase, done`)
	raw, err := c.Conn().Call(ctx, contract.MethodRecover, json.RawMessage(`{"two_phase":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var res contract.RecoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Answers) != 1 || res.Answers[0].Text != "the answer nobody took" {
		t.Fatalf("after the refused ask, recover answered %s; want the kept answer", raw)
	}
}

// TestRecoverDoneOneByOne: a done list holding ids that aren't an
// answer's (a path, one unknown) beside a good one is taken id by id, on
// a real server: the good one is let go (a two-phase ask after it no
// longer gets it), the bad ones passed over, and no error is sent, so
// none names a path of the machine.
func TestRecoverDoneOneByOne(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	f := &delivery.Answers{Paths: p}
	for _, text := range []string{"first", "second"} {
		if _, err := f.Keep(t.Context(), "telegram:42", text, time.Now(), 0); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := startServed(t, func(c *Config) { c.Home = home })
	c := dialThread(t, s, "")
	ctx := t.Context()
	ask := func(params string) contract.RecoverResult {
		t.Helper()
		raw, err := c.Conn().Call(ctx, contract.MethodRecover, json.RawMessage(params))
		if err != nil {
			t.Fatalf("recover %s: %v", params, err)
		}
		var res contract.RecoverResult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	got := ask(`{"two_phase":true}`)
	if len(got.Answers) != 2 {
		t.Fatalf("two-phase recover gave %d answers, want 2", len(got.Answers))
	}
	done, _ := json.Marshal(map[string]any{"done": []string{"../../../etc/passwd", got.Answers[0].ID, "no-such-answer"}})
	ask(string(done))
	left, err := f.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != got.Answers[1].ID {
		t.Fatalf("after done [a path, %s, an unknown id] the answers kept are %+v; want only %s", got.Answers[0].ID, left, got.Answers[1].ID)
	}
}
