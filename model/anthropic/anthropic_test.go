package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
)

const testModel = "claude-opus-5-5"

func newServer(t *testing.T) *fakeprovider.Server {
	t.Helper()
	s := fakeprovider.New()
	t.Cleanup(s.Close)
	return s
}

// stepClock is a clock that moves on a second at each reading.
func stepClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

func newProvider(t *testing.T, s *fakeprovider.Server, o Options) *Provider {
	t.Helper()
	env := map[string]string{model.EnvAnthropicKey: "test-key", model.EnvAnthropicBaseURL: s.URL()}
	route, err := model.Resolve("anthropic/"+testModel, env)
	if err != nil {
		t.Fatal(err)
	}
	o.APIKey = env[route.KeyEnv]
	if o.Now == nil {
		o.Now = stepClock()
	}
	p, err := New(route, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func user(parts ...model.Part) model.Message {
	return model.Message{Role: model.RoleUser, Parts: parts}
}

func assistant(parts ...model.Part) model.Message {
	return model.Message{Role: model.RoleAssistant, Parts: parts}
}

// collect gathers the deltas of a call.
type collect struct{ text, thinking []string }

func (c *collect) on(d model.Delta) error {
	if d.Text != "" && d.Thinking != "" {
		return fmt.Errorf("a delta with both text and thinking: %+v", d)
	}
	if d.Text != "" {
		c.text = append(c.text, d.Text)
	}
	if d.Thinking != "" {
		c.thinking = append(c.thinking, d.Thinking)
	}
	return nil
}

// at follows a path of keys and indexes through decoded JSON.
func at(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k < 0 {
				k += len(a)
			}
			if k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestStreamText(t *testing.T) {
	s := newServer(t)
	want := "Hello from the script, streamed in pieces."
	s.Script(fakeprovider.Turn{Text: want, Usage: fakeprovider.Usage{In: 12, Out: 9, CacheRead: 3000, CacheWrite: 40}})
	p := newProvider(t, s, Options{})
	var c collect
	resp, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{user(model.Text("hi"))}}, c.on)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.text) < 2 || strings.Join(c.text, "") != want || resp.Text != want || len(c.thinking) != 0 {
		t.Errorf("deltas %q, text %q", c.text, resp.Text)
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
	if r.MaxTokens != DefaultMaxTokens || r.Model != testModel || r.LastUserText != "hi" || at(r.Decoded, "tool_choice") != nil {
		t.Errorf("decoded %+v", r)
	}
}

// A call, its thinking kept with its signature, and the round after it
// sending both back with the call's answer, told to call nothing.
func TestToolRoundTrip(t *testing.T) {
	s := newServer(t)
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
		Messages: []model.Message{user(model.Text("what did I say about cafés?"))},
	}
	var c collect
	resp, err := p.Stream(t.Context(), req, c.on)
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
	if strings.Join(c.thinking, "") != resp.Thinking[0].Text || len(c.thinking) < 2 || resp.Text != "Let me look." ||
		strings.Contains(strings.Join(c.text, ""), "owner wants") {
		t.Errorf("thinking deltas %q, text deltas %q, text %q", c.thinking, c.text, resp.Text)
	}
	first := s.Requests()[0]
	if at(first.Decoded, "tools", 0, "input_schema", "required", 0) != "query" || at(first.Decoded, "tools", 1, "input_schema", "type") != "object" ||
		at(first.Decoded, "tools", 0, "description") != "Search notes." {
		t.Errorf("tools sent %v", at(first.Decoded, "tools"))
	}

	var parts []model.Part
	for _, th := range resp.Thinking {
		parts = append(parts, model.ThinkingPart(th))
	}
	parts = append(parts, model.Text(resp.Text))
	for _, call := range resp.Calls {
		parts = append(parts, model.ToolUse(call.ID, call.Name, call.Input))
	}
	req.Messages = append(req.Messages, assistant(parts...), user(model.ToolResult(resp.Calls[0].ID, "2 notes: Café Lumen, Blue Door", false)))
	req.ToolChoice = model.ToolNone
	resp2, err := p.Stream(t.Context(), req, func(model.Delta) error { return nil })
	if err != nil || resp2.Text != "You noted two cafés." {
		t.Fatalf("second = %+v, %v", resp2, err)
	}
	second := s.Requests()[1].Decoded
	msgs, _ := at(second, "messages").([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request's messages: %v", msgs)
	}
	th := at(msgs[1], "content", 0)
	if at(th, "type") != "thinking" || at(th, "thinking") != resp.Thinking[0].Text || at(th, "signature") != resp.Thinking[0].Signature {
		t.Errorf("thinking sent back as %v", th)
	}
	tu := at(msgs[1], "content", 2)
	if at(tu, "type") != "tool_use" || at(tu, "id") != resp.Calls[0].ID || at(tu, "input", "query") != "café" {
		t.Errorf("call sent back as %v", tu)
	}
	tr := at(msgs[2], "content", 0)
	if at(msgs[2], "role") != "user" || at(tr, "type") != "tool_result" || at(tr, "tool_use_id") != resp.Calls[0].ID ||
		at(tr, "content", 0, "text") != "2 notes: Café Lumen, Blue Door" || at(tr, "is_error") != nil {
		t.Errorf("answer sent as %v", msgs[2])
	}
	if at(second, "tool_choice", "type") != "none" || len(at(second, "tools").([]any)) != 2 {
		t.Errorf("tool_choice %v with tools %v", at(second, "tool_choice"), at(second, "tools"))
	}
}

// cacheMarks lists where a body has cache_control, as paths.
func cacheMarks(v any, path string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "cache_control" {
				if at(x, "type") == "ephemeral" {
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
	s := newServer(t)
	p := newProvider(t, s, Options{})
	sections := []model.Section{
		{Text: "Link's base.", Cache: true},
		{Text: "For this model.", Cache: true},
		{Text: ""},
		{Text: "Your notes: none.", Cache: false},
	}
	tools := []model.Tool{{Name: "memory__search"}, {Name: "run__command"}}
	conv := []model.Message{
		user(model.Text("first")),
		assistant(model.Text("one")),
		user(model.Text("second"), model.Image("image/png", "iVBORw0KGgo=")),
		assistant(model.ToolUse("toolu_1", "memory__search", `{}`)),
		user(model.ToolResult("toolu_1", "found", false)),
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
	s := newServer(t)
	p := newProvider(t, s, Options{})
	req := model.Request{Model: testModel, Messages: []model.Message{user(
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
	c := at(s.Requests()[0].Decoded, "messages", 0, "content")
	if at(c, 1, "type") != "image" || at(c, 1, "source", "type") != "base64" || at(c, 1, "source", "media_type") != "image/png" || at(c, 1, "source", "data") != "iVBORw0KGgo=" {
		t.Errorf("image sent as %v", at(c, 1))
	}
	if at(c, 2, "type") != "document" || at(c, 2, "source", "media_type") != "application/pdf" || at(c, 2, "source", "data") != "JVBERi0xLjQ=" || at(c, 2, "title") != "report.pdf" {
		t.Errorf("pdf sent as %v", at(c, 2))
	}
	if at(c, 3, "type") != "document" || at(c, 3, "source", "type") != "text" || at(c, 3, "source", "data") != "# Notes" {
		t.Errorf("text document sent as %v", at(c, 3))
	}
	if at(c, 4, "source", "data") != "hello" || at(c, 4, "source", "media_type") != "text/plain" {
		t.Errorf("text/plain bytes sent as %v", at(c, 4))
	}
	if at(c, 5, "type") != "text" || !strings.Contains(at(c, 5, "text").(string), "audio file (audio/ogg") {
		t.Errorf("audio sent as %v", at(c, 5))
	}
	if at(c, 6, "type") != "text" || !strings.Contains(at(c, 6, "text").(string), "image/bmp") {
		t.Errorf("a bmp sent as %v", at(c, 6))
	}
}

func TestErrors(t *testing.T) {
	s := newServer(t)
	s.Script(
		fakeprovider.Turn{Status: 400, ErrorBody: "prompt is too long: 210000 tokens > 200000 maximum"},
		fakeprovider.Turn{Status: 401, ErrorBody: "invalid x-api-key"},
		fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"},
	)
	p := newProvider(t, s, Options{})
	req := model.Request{Model: testModel, Messages: []model.Message{user(model.Text("hi"))}}
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
	s := newServer(t)
	s.Script(fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"}, fakeprovider.Turn{Text: "after a retry"})
	p := newProvider(t, s, Options{Retries: 1})
	resp, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{user(model.Text("hi"))}}, func(model.Delta) error { return nil })
	if err != nil || resp.Text != "after a retry" || len(s.Requests()) != 2 {
		t.Errorf("= %+v, %v after %d requests", resp, err, len(s.Requests()))
	}
}

func TestThinkingConfig(t *testing.T) {
	s := newServer(t)
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
		if _, err := p.Stream(t.Context(), model.Request{Model: testModel, Messages: []model.Message{user(model.Text("hi"))}}, func(model.Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		r := s.Requests()[n]
		if at(r.Decoded, "thinking", "type") != tc.wantType || r.MaxTokens != tc.wantMax || at(r.Decoded, "thinking", "budget_tokens") != tc.wantBudge {
			t.Errorf("%+v sent thinking %v, max_tokens %d", tc.o, at(r.Decoded, "thinking"), r.MaxTokens)
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
		Tools: []model.Tool{{Name: "memory__search"}}, Messages: []model.Message{user(model.Text("hi"))}}
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
	s := newServer(t)
	s.Script(fakeprovider.Turn{Status: 529, ErrorBody: "Overloaded"}, fakeprovider.Turn{Text: "read"})
	p := newProvider(t, s, Options{Retries: 1})
	text := strings.Repeat("a <long> \"prompt\" é\n", 1<<15)
	data := strings.Repeat("iVBO", 1<<15)
	req := model.Request{Model: testModel, Messages: []model.Message{user(model.Text("[header]"), model.Text(text), model.Image("image/png", data))}}
	resp, err := p.Stream(t.Context(), req, func(model.Delta) error { return nil })
	if err != nil || resp.Text != "read" {
		t.Fatalf("answered %q, %v", resp.Text, err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("%d requests; the second the first's bytes: %v", len(reqs), len(reqs) == 2 && bytes.Equal(reqs[0].Body, reqs[1].Body))
	}
	c := at(reqs[1].Decoded, "messages", 0, "content")
	if at(c, 0, "text") != "[header]" || at(c, 1, "text") != text || at(c, 2, "source", "data") != data || at(reqs[1].Decoded, "stream") != true {
		t.Fatalf("sent %.300s", reqs[1].Body)
	}
	if bytes.Contains(reqs[1].Body, []byte("lnk-hole-")) {
		t.Fatal("a placeholder was sent")
	}
}
