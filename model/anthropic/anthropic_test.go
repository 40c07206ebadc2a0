package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/model/modeltest"
)

const testModel = "claude-opus-5-5"

func newProvider(t *testing.T, s *fakeprovider.Server, o Options) *Provider {
	t.Helper()
	env := map[string]string{model.EnvAnthropicKey: "test-key", model.EnvAnthropicBaseURL: s.URL()}
	route, err := model.Resolve("anthropic/"+testModel, env)
	if err != nil {
		t.Fatal(err)
	}
	o.APIKey = env[route.KeyEnv]
	if o.Now == nil {
		o.Now = modeltest.StepClock()
	}
	p, err := New(route, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStreamText(t *testing.T) {
	s := modeltest.NewServer(t)
	want := "Hello from the script, streamed in pieces."
	s.Script(fakeprovider.Turn{Text: want, Usage: fakeprovider.Usage{In: 12, Out: 9, CacheRead: 3000, CacheWrite: 40}})
	p := newProvider(t, s, Options{})
	var c modeltest.Collect
	resp, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{modeltest.User(model.Text("hi"))}}, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Text) < 2 || strings.Join(c.Text, "") != want || resp.Text != want || len(c.Thinking) != 0 {
		t.Errorf("deltas %q, text %q", c.Text, resp.Text)
	}
	if c.LastMore {
		t.Error("the stream's last delta says More")
	}
	if resp.Provider != "anthropic" || resp.Model != testModel || !strings.HasPrefix(resp.ID, "msg_") || resp.StopReason != model.StopEnd {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (model.Usage{In: 12, Out: 9, CacheRead: 3000, CacheWrite: 40}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	if resp.Latency != time.Second {
		t.Errorf("latency %v, want the clock's one step", resp.Latency)
	}
	r := s.Requests()[0]
	if r.Header.Get("Authorization") != "Bearer test-key" || r.Header.Get("Anthropic-Version") == "" || r.Path != "/v1/messages" || !r.Stream {
		t.Errorf("sent %s %v", r.Path, r.Header)
	}
	if r.MaxTokens != DefaultMaxTokens || r.Model != testModel || r.LastUserText != "hi" || modeltest.At(r.Decoded, "tool_choice") != nil {
		t.Errorf("decoded %+v", r)
	}
}

// A call, its thinking kept with its signature, and the round after it
// sending both back with the call's answer, told to call nothing.
func TestToolRoundTrip(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{
		Thinking:  "The owner wants café notes; search memory.",
		Text:      "Let me look.",
		ToolCalls: []fakeprovider.ToolCall{{Name: "memory__search", Input: `{"query":"café","limit":5}`}},
	}, fakeprovider.Turn{Text: "You noted two cafés."})
	p := newProvider(t, s, Options{})
	req := model.Request{
		Model:  testModel,
		System: []model.Section{{Text: "You are Link.", Cache: true}},
		Tools: []model.Tool{
			{Name: "memory__search", Description: "Search notes.", Schema: `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`},
			{Name: "run__command", Description: "Run a program."},
		},
		Messages: []model.Message{modeltest.User(model.Text("what did I say about cafés?"))},
	}
	var c modeltest.Collect
	resp, err := p.Stream(t.Context(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopToolUse || len(resp.Calls) != 1 || resp.Calls[0].Name != "memory__search" ||
		!strings.HasPrefix(resp.Calls[0].ID, "toolu_") || resp.Calls[0].Input != `{"query":"café","limit":5}` {
		t.Fatalf("calls %+v, stop %q", resp.Calls, resp.StopReason)
	}
	if len(resp.Thinking) != 1 || resp.Thinking[0].Text != "The owner wants café notes; search memory." || resp.Thinking[0].Signature == "" {
		t.Fatalf("thinking %+v", resp.Thinking)
	}
	if strings.Join(c.Thinking, "") != resp.Thinking[0].Text || len(c.Thinking) < 2 || resp.Text != "Let me look." ||
		strings.Contains(strings.Join(c.Text, ""), "owner wants") {
		t.Errorf("thinking deltas %q, text deltas %q, text %q", c.Thinking, c.Text, resp.Text)
	}
	first := s.Requests()[0]
	if modeltest.At(first.Decoded, "tools", 0, "input_schema", "required", 0) != "query" || modeltest.At(first.Decoded, "tools", 1, "input_schema", "type") != "object" ||
		modeltest.At(first.Decoded, "tools", 0, "description") != "Search notes." {
		t.Errorf("tools sent %v", modeltest.At(first.Decoded, "tools"))
	}

	var parts []model.Part
	for _, th := range resp.Thinking {
		parts = append(parts, model.ThinkingPart(th))
	}
	parts = append(parts, model.Text(resp.Text))
	for _, call := range resp.Calls {
		parts = append(parts, model.ToolUse(call.ID, call.Name, call.Input))
	}
	req.Messages = append(req.Messages, modeltest.Assistant(parts...), modeltest.User(model.ToolResult(resp.Calls[0].ID, "2 notes: Café Lumen, Blue Door", false)))
	req.ToolChoice = model.ToolNone
	resp2, err := p.Stream(t.Context(), req, func(model.Delta) error { return nil })
	if err != nil || resp2.Text != "You noted two cafés." {
		t.Fatalf("second = %+v, %v", resp2, err)
	}
	second := s.Requests()[1].Decoded
	msgs, _ := modeltest.At(second, "messages").([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request's messages: %v", msgs)
	}
	th := modeltest.At(msgs[1], "content", 0)
	if modeltest.At(th, "type") != "thinking" || modeltest.At(th, "thinking") != resp.Thinking[0].Text || modeltest.At(th, "signature") != resp.Thinking[0].Signature {
		t.Errorf("thinking sent back as %v", th)
	}
	tu := modeltest.At(msgs[1], "content", 2)
	if modeltest.At(tu, "type") != "tool_use" || modeltest.At(tu, "id") != resp.Calls[0].ID || modeltest.At(tu, "input", "query") != "café" {
		t.Errorf("call sent back as %v", tu)
	}
	tr := modeltest.At(msgs[2], "content", 0)
	if modeltest.At(msgs[2], "role") != "user" || modeltest.At(tr, "type") != "tool_result" || modeltest.At(tr, "tool_use_id") != resp.Calls[0].ID ||
		modeltest.At(tr, "content", 0, "text") != "2 notes: Café Lumen, Blue Door" || modeltest.At(tr, "is_error") != nil {
		t.Errorf("answer sent as %v", msgs[2])
	}
	if modeltest.At(second, "tool_choice", "type") != "none" || len(modeltest.At(second, "tools").([]any)) != 2 {
		t.Errorf("tool_choice %v with tools %v", modeltest.At(second, "tool_choice"), modeltest.At(second, "tools"))
	}
}

// cacheMarks lists where a body has cache_control, as paths.
func cacheMarks(v any, path string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "cache_control" {
				if modeltest.At(x, "type") == "ephemeral" {
					*out = append(*out, path)
				} else {
					*out = append(*out, path+"(bad)")
				}
				continue
			}
			cacheMarks(x, path+"."+k, out)
		}
	case []any:
		for i, x := range v {
			cacheMarks(x, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

func TestCacheBreakpoints(t *testing.T) {
	s := modeltest.NewServer(t)
	p := newProvider(t, s, Options{})
	sections := []model.Section{
		{Text: "Link's base.", Cache: true},
		{Text: "For this model.", Cache: true},
		{Text: ""},
		{Text: "Your notes: none.", Cache: false},
	}
	tools := []model.Tool{{Name: "memory__search"}, {Name: "run__command"}}
	conv := []model.Message{
		modeltest.User(model.Text("first")),
		modeltest.Assistant(model.Text("one")),
		modeltest.User(model.Text("second"), model.Image("image/png", "iVBORw0KGgo=")),
		modeltest.Assistant(model.ToolUse("toolu_1", "memory__search", `{}`)),
		modeltest.User(model.ToolResult("toolu_1", "found", false)),
	}
	cases := []struct {
		name string
		req  model.Request
		want []string
	}{
		{"all four", model.Request{System: sections, Tools: tools, Messages: conv},
			[]string{".messages[2].content[1]", ".messages[4].content[0]", ".system[1]", ".tools[1]"}},
		{"no tools", model.Request{System: sections, Messages: conv},
			[]string{".messages[2].content[1]", ".messages[4].content[0]", ".system[1]"}},
		{"no cacheable section, one user message", model.Request{System: sections[3:], Tools: tools, Messages: conv[:1]},
			[]string{".messages[0].content[0]", ".tools[1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := len(s.Requests())
			tc.req.Model = testModel
			if _, err := p.Stream(t.Context(), tc.req, func(model.Delta) error { return nil }); err != nil {
				t.Fatal(err)
			}
			var got []string
			cacheMarks(s.Requests()[n].Decoded, "", &got)
			if len(got) > MaxBreakpoints || strings.Join(sorted(got), " ") != strings.Join(tc.want, " ") {
				t.Errorf("cache_control at %v, want %v", sorted(got), tc.want)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestMedia(t *testing.T) {
	s := modeltest.NewServer(t)
	p := newProvider(t, s, Options{})
	req := model.Request{Model: testModel, Messages: []model.Message{modeltest.User(
		model.Text("look"),
		model.Image("image/png", "iVBORw0KGgo="),
		model.Document("application/pdf", "report.pdf", "JVBERi0xLjQ="),
		model.TextDocument("text/markdown", "notes.md", "# Notes"),
		model.Document("text/plain", "a.txt", "aGVsbG8="),
		model.Audio("audio/ogg", "T2dnUw=="),
		model.Image("image/bmp", "Qk0="),
	)}}
	if _, err := p.Stream(t.Context(), req, func(model.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	c := modeltest.At(s.Requests()[0].Decoded, "messages", 0, "content")
	if modeltest.At(c, 1, "type") != "image" || modeltest.At(c, 1, "source", "type") != "base64" || modeltest.At(c, 1, "source", "media_type") != "image/png" || modeltest.At(c, 1, "source", "data") != "iVBORw0KGgo=" {
		t.Errorf("image sent as %v", modeltest.At(c, 1))
	}
	if modeltest.At(c, 2, "type") != "document" || modeltest.At(c, 2, "source", "media_type") != "application/pdf" || modeltest.At(c, 2, "source", "data") != "JVBERi0xLjQ=" || modeltest.At(c, 2, "title") != "report.pdf" {
		t.Errorf("pdf sent as %v", modeltest.At(c, 2))
	}
	if modeltest.At(c, 3, "type") != "document" || modeltest.At(c, 3, "source", "type") != "text" || modeltest.At(c, 3, "source", "data") != "# Notes" {
		t.Errorf("text document sent as %v", modeltest.At(c, 3))
	}
	if modeltest.At(c, 4, "source", "data") != "hello" || modeltest.At(c, 4, "source", "media_type") != "text/plain" {
		t.Errorf("text/plain bytes sent as %v", modeltest.At(c, 4))
	}
	if modeltest.At(c, 5, "type") != "text" || !strings.Contains(modeltest.At(c, 5, "text").(string), "audio file (audio/ogg") {
		t.Errorf("audio sent as %v", modeltest.At(c, 5))
	}
	if modeltest.At(c, 6, "type") != "text" || !strings.Contains(modeltest.At(c, 6, "text").(string), "image/bmp") {
		t.Errorf("a bmp sent as %v", modeltest.At(c, 6))
	}
}

func TestErrors(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(
		fakeprovider.Turn{Status: 400, ErrorBody: "prompt is too long: 210000 tokens > 200000 maximum"},
		fakeprovider.Turn{Status: 401, ErrorBody: "invalid x-api-key"},
		fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"},
	)
	p := newProvider(t, s, Options{})
	req := model.Request{Model: testModel, Messages: []model.Message{modeltest.User(model.Text("hi"))}}
	none := func(model.Delta) error { return nil }
	_, err := p.Stream(t.Context(), req, none)
	var perr *model.Error
	if !errors.Is(err, model.ErrPromptTooLong) || !errors.As(err, &perr) || perr.Status != 400 || !strings.Contains(err.Error(), "210000 tokens") {
		t.Errorf("too long: %v", err)
	}
	if _, err = p.Stream(t.Context(), req, none); !errors.Is(err, model.ErrAuth) || errors.Is(err, model.ErrPromptTooLong) {
		t.Errorf("key refused: %v", err)
	}
	if _, err = p.Stream(t.Context(), req, none); !errors.As(err, &perr) || perr.Status != 529 || !perr.Retryable() {
		t.Errorf("overloaded: %v", err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests sent, want 3 (no retries)", n)
	}

	// An error of onDelta ends the call with it.
	stop := errors.New("caller gone")
	s.Script(fakeprovider.Turn{Text: "a long answer in pieces"})
	if _, err := p.Stream(t.Context(), req, func(model.Delta) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("onDelta's error: %v", err)
	}

	// A call's context bounds it.
	s.Script(fakeprovider.Turn{Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Stream(ctx, req, none); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung call: %v", err)
	}
}

func TestRetries(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"}, fakeprovider.Turn{Text: "after a retry"})
	p := newProvider(t, s, Options{Retries: 1})
	resp, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{modeltest.User(model.Text("hi"))}}, func(model.Delta) error { return nil })
	if err != nil || resp.Text != "after a retry" || len(s.Requests()) != 2 {
		t.Errorf("= %+v, %v after %d requests", resp, err, len(s.Requests()))
	}
}

func TestThinkingConfig(t *testing.T) {
	s := modeltest.NewServer(t)
	for _, tc := range []struct {
		o         Options
		wantType  any
		wantMax   int
		wantBudge any
	}{
		{Options{}, nil, DefaultMaxTokens, nil},
		{Options{Thinking: ThinkingAdaptive, MaxTokens: 2000}, "adaptive", 2000, nil},
		{Options{Thinking: ThinkingEnabled, ThinkingBudget: 4096, MaxTokens: 2000}, "enabled", 6096, json.Number("4096")},
		{Options{Thinking: ThinkingDisabled}, "disabled", DefaultMaxTokens, nil},
	} {
		n := len(s.Requests())
		p := newProvider(t, s, tc.o)
		if _, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{modeltest.User(model.Text("hi"))}}, func(model.Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		r := s.Requests()[n]
		if modeltest.At(r.Decoded, "thinking", "type") != tc.wantType || r.MaxTokens != tc.wantMax || modeltest.At(r.Decoded, "thinking", "budget_tokens") != tc.wantBudge {
			t.Errorf("%+v sent thinking %v, max_tokens %d", tc.o, modeltest.At(r.Decoded, "thinking"), r.MaxTokens)
		}
	}
}

func TestNew(t *testing.T) {
	route := model.Route{Provider: model.ProviderAnthropic, BaseURL: "http://127.0.0.1:1", APIModel: testModel, KeyEnv: model.EnvAnthropicKey}
	if _, err := New(route, Options{}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, err := New(model.Route{Provider: model.ProviderOpenAI}, Options{APIKey: "k"}); err == nil {
		t.Error("an OpenAI route was taken")
	}
	if _, err := New(route, Options{APIKey: "k", Thinking: ThinkingEnabled, ThinkingBudget: 100}); err == nil {
		t.Error("a thinking budget under 1024 was taken")
	}
	if _, err := New(route, Options{APIKey: "k", Thinking: "lots"}); err == nil {
		t.Error("an unknown thinking was taken")
	}
	if _, err := New(route, Options{APIKey: "k", Retries: -1}); err == nil {
		t.Error("negative retries were taken")
	}
}

// BenchmarkStream is one streamed answer of three chunks from the fake
// provider on loopback: the provider's cost per call, with the SDK's.
func BenchmarkStream(b *testing.B) {
	s := fakeprovider.New()
	defer s.Close()
	route := model.Route{Provider: model.ProviderAnthropic, BaseURL: s.URL(), APIModel: testModel}
	p, err := New(route, Options{APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	req := model.Request{Model: testModel, System: []model.Section{{Text: strings.Repeat("Link's base. ", 200), Cache: true}},
		Tools: []model.Tool{{Name: "memory__search"}}, Messages: []model.Message{modeltest.User(model.Text("hi"))}}
	for b.Loop() {
		if _, err := p.Stream(b.Context(), req, func(model.Delta) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// A large text and image are sent whole, quoted as they are read, not
// copied by the SDK's encoder; a request sent again after a 529 sends
// them again from the start, the same bytes.
func TestLargeParts(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"}, fakeprovider.Turn{Text: "read"})
	p := newProvider(t, s, Options{Retries: 1})
	text := strings.Repeat("a <long> \"prompt\" é\n", 1<<15)
	data := strings.Repeat("iVBO", 1<<15)
	req := model.Request{Model: testModel, Messages: []model.Message{modeltest.User(model.Text("[header]"), model.Text(text), model.Image("image/png", data))}}
	resp, err := p.Stream(t.Context(), req, func(model.Delta) error { return nil })
	if err != nil || resp.Text != "read" {
		t.Fatalf("answered %q, %v", resp.Text, err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("%d requests; the second the first's bytes: %v", len(reqs), len(reqs) == 2 && bytes.Equal(reqs[0].Body, reqs[1].Body))
	}
	c := modeltest.At(reqs[1].Decoded, "messages", 0, "content")
	if modeltest.At(c, 0, "text") != "[header]" || modeltest.At(c, 1, "text") != text || modeltest.At(c, 2, "source", "data") != data || modeltest.At(reqs[1].Decoded, "stream") != true {
		t.Fatalf("sent %.300s", reqs[1].Body)
	}
	if bytes.Contains(reqs[1].Body, []byte("lnk-hole-")) {
		t.Fatal("a placeholder was sent")
	}
}
