package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp/acptest"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// The models of the editor's agent: opus runs it, sonnet is an alias.
const (
	editorModel = "anthropic/claude-opus-5-5"
	editorOther = "anthropic/claude-sonnet-5"
)

// editorHome is a home whose agent runs on editorModel, with sonnet an
// alias of editorOther, both served by fake's Anthropic API.
func editorHome(t *testing.T, fake *fakeprovider.Server) (home string, env map[string]string) {
	t.Helper()
	home = t.TempDir()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p.Config()), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{"model":{"name":"` + editorModel + `","aliases":{"sonnet":"` + editorOther + `"}}}`
	if err := os.WriteFile(p.Config(), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, map[string]string{model.EnvAnthropicKey: "ka", model.EnvAnthropicBaseURL: fake.URL()}
}

// runEditor runs scenario of acp/testdata/ts/editor.mjs, the official
// TypeScript ACP SDK as an editor, against ServeStdio over its stdin and
// stdout, and decodes the report it writes into report. It needs node
// and `npm ci --prefix acp/testdata/ts`.
func runEditor(t *testing.T, home string, env map[string]string, scenario string, report any) {
	t.Helper()
	stderr := acptest.RunScript(t, "editor.mjs", []string{scenario}, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return ServeStdio(ctx, Config{Home: home, Key: []byte("serve-test-key-0123456789"), Env: env}, r, w)
	})
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), report); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
}

// rpcError is an error as the SDK rejected a request with it.
type rpcError struct {
	Code    int
	Message string
	Answer  json.RawMessage
}

// session/list shows the agent's two conversations, each titled with
// the first line of its latest message and dated, under the cwd asked
// (a thread belongs to no folder), after initialize said list; a cursor
// never given is refused; each turn told session_info_update.
func TestEditorListsSessions(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(fakeprovider.Turn{Text: "Lisbon it is."}, fakeprovider.Turn{Text: "Notes drafted."})
	home, env := editorHome(t, fake)
	var r struct {
		Init struct {
			AgentCapabilities struct {
				SessionCapabilities map[string]any
			}
		}
		List, All struct {
			Sessions []struct {
				SessionID, Cwd, Title, UpdatedAt string
			}
			NextCursor *string
		}
		BadCursor rpcError
		Infos     []struct {
			SessionID string
			Update    struct{ Title, UpdatedAt string }
		}
	}
	runEditor(t, home, env, "list", &r)
	caps := r.Init.AgentCapabilities.SessionCapabilities
	if caps["list"] == nil || caps["close"] == nil || caps["resume"] == nil {
		t.Errorf("sessionCapabilities %v, want list, close and resume", caps)
	}
	want := map[string]string{"discord:100": "Plan the trip to Lisbon", "discord:200": "Draft the release notes"}
	for name, list := range map[string]struct {
		cwd  string
		list []struct{ SessionID, Cwd, Title, UpdatedAt string }
	}{"with cwd": {"/work", r.List.Sessions}, "without": {"/", r.All.Sessions}} {
		if len(list.list) != 2 {
			t.Fatalf("%s: listed %+v, want the two conversations", name, list.list)
		}
		for _, s := range list.list {
			if s.Title != want[s.SessionID] || s.Cwd != list.cwd {
				t.Errorf("%s: %+v, want title %q and cwd %s", name, s, want[s.SessionID], list.cwd)
			}
			if _, err := time.Parse(time.RFC3339, s.UpdatedAt); err != nil {
				t.Errorf("%s: updatedAt of %s: %v", name, s.SessionID, err)
			}
		}
	}
	if r.List.NextCursor != nil {
		t.Errorf("a next cursor %q with every session given", *r.List.NextCursor)
	}
	if r.BadCursor.Code != -32602 || !strings.Contains(r.BadCursor.Message, "cursor") {
		t.Errorf("a cursor never given: %+v, want invalid params naming the cursor", r.BadCursor)
	}
	if len(r.Infos) != 2 || r.Infos[0].SessionID != "discord:100" || r.Infos[0].Update.Title != want["discord:100"] || r.Infos[1].Update.Title != want["discord:200"] {
		t.Errorf("session_info_update %+v, want one a turn with its title", r.Infos)
	}
}

// session/close cancels the session's running prompt (answered
// cancelled before the close is), a prompt to it is then refused until
// it is resumed, and a second close refused: it is no longer open.
func TestEditorClosesSession(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(fakeprovider.Turn{Hang: true}, fakeprovider.Turn{Text: "Welcome back."})
	home, env := editorHome(t, fake)
	var r struct {
		Closed        map[string]any
		RunningAnswer struct{ StopReason string }
		AfterClose    rpcError
		CloseAgain    rpcError
		Reopened      struct{ StopReason string }
	}
	runEditor(t, home, env, "close", &r)
	if r.Closed == nil || len(r.Closed) != 0 {
		t.Errorf("session/close answered %v, want {}", r.Closed)
	}
	if r.RunningAnswer.StopReason != "cancelled" {
		t.Errorf("the running prompt ended %q, want cancelled", r.RunningAnswer.StopReason)
	}
	// The connection's only session closed, the prompt is out of turn
	// (invalid request); with another open, its session isn't (params).
	if (r.AfterClose.Code != -32600 && r.AfterClose.Code != -32602) || !strings.Contains(r.AfterClose.Message, "resume") {
		t.Errorf("a prompt after close: %+v, want refused", r.AfterClose)
	}
	if r.CloseAgain.Code != -32602 || !strings.Contains(r.CloseAgain.Message, "not closed since") {
		t.Errorf("a second close: %+v, want refused", r.CloseAgain)
	}
	if r.Reopened.StopReason != "end_turn" {
		t.Errorf("after a resume the prompt ended %q", r.Reopened.StopReason)
	}
}

// begunElsewhere is a home whose conversation discord:400 a first
// process began ("My name is Ada.", answered "Hello Ada."), and the fake
// provider that answered it, the next answer scripted.
func begunElsewhere(t *testing.T) (*fakeprovider.Server, string, map[string]string) {
	t.Helper()
	fake := fakeprovider.New()
	t.Cleanup(fake.Close)
	fake.Script(fakeprovider.Turn{Text: "Hello Ada."}, fakeprovider.Turn{Text: "You are Ada."})
	home, env := editorHome(t, fake)
	var begun struct{ Answer struct{ StopReason string } }
	runEditor(t, home, env, "begin", &begun)
	if begun.Answer.StopReason != "end_turn" {
		t.Fatalf("the first process's turn ended %q", begun.Answer.StopReason)
	}
	return fake, home, env
}

// session/resume in a second process takes up the conversation the
// first began: nothing of it is replayed, and the model is sent it.
func TestEditorResumesSession(t *testing.T) {
	fake, home, env := begunElsewhere(t)
	var r struct {
		Resumed  map[string]any
		Answer   struct{ StopReason string }
		Replayed []any
	}
	runEditor(t, home, env, "resume", &r)
	if r.Answer.StopReason != "end_turn" || len(r.Replayed) != 0 {
		t.Fatalf("resumed %+v", r)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "My name is Ada.") || !strings.Contains(string(reqs[1].Body), "Hello Ada.") {
		t.Fatalf("the resumed turn's request doesn't hold the conversation: %d requests", len(reqs))
	}
}

// session/load in a second process replays the conversation the first
// began before its answer, each message a user_message_chunk or an
// agent_message_chunk of its own messageId, then takes it up.
func TestEditorLoadsSession(t *testing.T) {
	_, home, env := begunElsewhere(t)
	var r struct {
		Replayed []struct{ Kind, Text, MessageID string }
		Answer   struct{ StopReason string }
	}
	runEditor(t, home, env, "load", &r)
	var got []string
	ids := map[string]bool{}
	for _, u := range r.Replayed {
		if u.Kind == "available_commands_update" {
			continue
		}
		got = append(got, u.Kind+": "+u.Text)
		if u.MessageID == "" || ids[u.MessageID] {
			t.Errorf("replayed %+v: want a messageId of its own", u)
		}
		ids[u.MessageID] = true
	}
	if want := "user_message_chunk: My name is Ada.|agent_message_chunk: Hello Ada."; strings.Join(got, "|") != want {
		t.Errorf("replayed before the answer:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if r.Answer.StopReason != "end_turn" {
		t.Errorf("the prompt after the load ended %q", r.Answer.StopReason)
	}
}

// The model is a config option of category model: listed in
// session/new's answer with the agent's model current and its alias's
// model beside it; set to the other, the next turn's request goes to
// it, the model_set event /model:set writes is stored, and a resume
// says it current; a model not offered is refused; a /model:set typed
// in the chat tells the picker (config_option_update).
func TestEditorPicksModel(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(fakeprovider.Turn{Text: "Sonnet here."})
	home, env := editorHome(t, fake)
	type option struct {
		ID, Name, Category, Type, CurrentValue string
		Options                                []struct{ Value, Name string }
	}
	var r struct {
		Created struct {
			SessionID     string
			ConfigOptions []option
		}
		Chosen  string
		Set     struct{ ConfigOptions []option }
		Answer  struct{ StopReason string }
		Wrong   rpcError
		Resumed struct{ ConfigOptions []option }
		Updates []struct {
			Update struct{ ConfigOptions []option }
		}
	}
	runEditor(t, home, env, "model", &r)
	if len(r.Created.ConfigOptions) != 1 {
		t.Fatalf("session/new's config options %+v", r.Created.ConfigOptions)
	}
	picker := r.Created.ConfigOptions[0]
	if picker.ID != "model" || picker.Category != "model" || picker.Type != "select" || picker.CurrentValue != editorModel || len(picker.Options) != 2 || picker.Options[1].Value != editorOther || picker.Options[1].Name != "sonnet ("+editorOther+")" {
		t.Fatalf("the model picker %+v", picker)
	}
	if r.Chosen != editorOther || len(r.Set.ConfigOptions) != 1 || r.Set.ConfigOptions[0].CurrentValue != editorOther {
		t.Errorf("set_config_option answered %+v", r.Set)
	}
	if len(r.Resumed.ConfigOptions) != 1 || r.Resumed.ConfigOptions[0].CurrentValue != editorOther {
		t.Errorf("a resume after the set says %+v", r.Resumed.ConfigOptions)
	}
	if len(r.Updates) != 1 || len(r.Updates[0].Update.ConfigOptions) != 1 || r.Updates[0].Update.ConfigOptions[0].CurrentValue != editorModel {
		t.Errorf("after /model:set in the chat the picker was told %+v, want one config_option_update back on %s", r.Updates, editorModel)
	}
	if r.Wrong.Code != -32602 {
		t.Errorf("a model not offered: %+v, want invalid params", r.Wrong)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Model != "claude-sonnet-5" {
		t.Fatalf("the turn after the set asked %+v", reqs)
	}
	p, _ := store.For(home, contract.DefaultAgent)
	events, err := log.Open(p.Chats()).Read(t.Context(), r.Created.SessionID, 1)
	if err != nil || len(events) == 0 || events[0].Kind != store.KindModelSet || events[0].Model != editorOther {
		t.Fatalf("the conversation's events %+v, %v, want the model_set first", events, err)
	}
}

// After each turn, usage_update says the context used (the provider's
// count of the last call: its prompt and answer), the window's size and
// the session's cost so far (OpenRouter's, which reports it);
// each answer's chunks carry one messageId, another turn's another.
func TestEditorUsageAndMessageIDs(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{Text: "One, two, three, four.", Usage: fakeprovider.Usage{In: 1200, CacheRead: 300, Out: 40}, CostUSD: 0.25},
		fakeprovider.Turn{Text: "Five, six, seven.", Usage: fakeprovider.Usage{In: 1500, CacheRead: 300, Out: 30}, CostUSD: 0.5},
	)
	home, _ := editorHome(t, fake)
	// OpenRouter's API, which reports each call's cost.
	env := map[string]string{model.EnvOpenRouterKey: "ko", model.EnvOpenRouterURL: fake.URL() + "/api/v1"}
	var r struct {
		Seen []struct {
			Update struct {
				SessionUpdate string
				MessageID     *string
				Used, Size    int64
				Cost          *struct {
					Amount   float64
					Currency string
				}
				Content struct{ Text string }
			}
		}
	}
	runEditor(t, home, env, "usage", &r)
	var usage []int64
	var costs []float64
	var size int64
	ids := map[string]string{} // message id: its text
	var order []string
	for _, n := range r.Seen {
		u := n.Update
		switch u.SessionUpdate {
		case "usage_update":
			usage = append(usage, u.Used)
			size = u.Size
			if u.Cost != nil && u.Cost.Currency == "USD" {
				costs = append(costs, u.Cost.Amount)
			}
		case "agent_message_chunk":
			if u.MessageID == nil || *u.MessageID == "" {
				t.Fatalf("a chunk without a messageId: %+v", u)
			}
			if _, ok := ids[*u.MessageID]; !ok {
				order = append(order, *u.MessageID)
			}
			ids[*u.MessageID] += u.Content.Text
		}
	}
	if len(usage) != 2 || usage[0] != 1540 || usage[1] != 1830 {
		t.Errorf("usage_update used %v, want 1540 then 1830", usage)
	}
	if fmt.Sprint(costs) != "[0.25 0.75]" {
		t.Errorf("usage_update cost %v USD, want the session's so far: 0.25 then 0.75", costs)
	}
	if size != 200000 {
		t.Errorf("usage_update size %d, want the window's, 200000", size)
	}
	if len(order) != 2 || ids[order[0]] != "One, two, three, four." || ids[order[1]] != "Five, six, seven." {
		t.Errorf("the chunks by message id %v (in order %v), want one message a turn", ids, order)
	}
}

// $/cancel_request of a prompt in flight (the SDK's cancellationSignal)
// ends its turn: the prompt is answered cancelled, and the session takes
// the next prompt.
func TestEditorCancelsRequest(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(fakeprovider.Turn{Hang: true}, fakeprovider.Turn{Text: "Short."})
	home, env := editorHome(t, fake)
	var r struct {
		Cancelled struct {
			Answer struct{ StopReason string }
			Code   int
		}
		Next struct{ StopReason string }
	}
	runEditor(t, home, env, "cancel", &r)
	if r.Cancelled.Answer.StopReason != "cancelled" {
		t.Errorf("the cancelled prompt was answered %+v, want stopReason cancelled", r.Cancelled)
	}
	if r.Next.StopReason != "end_turn" {
		t.Errorf("the next prompt ended %q", r.Next.StopReason)
	}
}
