package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/model/modeltest"
)

// resolve makes a provider as cmd does: the route from the environment,
// the key from the variable it names.
func resolve(t *testing.T, name string, env map[string]string) (*Provider, model.Route) {
	t.Helper()
	route, err := model.Resolve(name, env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(route, Options{APIKey: env[route.KeyEnv], Now: modeltest.StepClock()})
	if err != nil {
		t.Fatal(err)
	}
	return p, route
}

func openAIEnv(s *fakeprovider.Server) map[string]string {
	return map[string]string{model.EnvOpenAIKey: "test-key", model.EnvOpenAIBaseURL: s.URL() + "/v1"}
}

func TestOpenAIStream(t *testing.T) {
	s := modeltest.NewServer(t)
	want := "Hello from the script, streamed in pieces."
	s.Script(fakeprovider.Turn{Text: want, Usage: fakeprovider.Usage{In: 100, Out: 9, CacheRead: 2048}})
	p, route := resolve(t, "openai/gpt-6-luna", openAIEnv(s))
	var c modeltest.Collect
	req := modeltest.Ask(route.APIModel, "hi")
	req.System = []model.Section{{Text: "Link's base.", Cache: true}, {Text: ""}, {Text: "Your notes."}}
	req.MaxTokens = 500
	resp, err := p.Stream(t.Context(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Text) < 2 || strings.Join(c.Text, "") != want || resp.Text != want {
		t.Errorf("deltas %q, text %q", c.Text, resp.Text)
	}
	if c.LastMore {
		t.Error("the stream's last delta says More")
	}
	type facts struct {
		Provider, Model string
		IDPrefix        bool
		StopReason      model.StopReason
		Latency         time.Duration
		CostUSD         float64
		Thinking        int
	}
	got := facts{resp.Provider, resp.Model, strings.HasPrefix(resp.ID, "chatcmpl-"), resp.StopReason, resp.Latency, resp.CostUSD, len(resp.Thinking)}
	if diff := cmp.Diff(facts{"openai", "gpt-6-luna", true, model.StopEnd, time.Second, 0, 0}, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if resp.Usage != (model.Usage{In: 100, Out: 9, CacheRead: 2048}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	r := s.Requests()[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" || !r.Stream || r.Model != "gpt-6-luna" {
		t.Errorf("sent %s %v", r.Path, r.Header)
	}
	if modeltest.At(r.Decoded, "stream_options", "include_usage") != true || modeltest.At(r.Decoded, "usage") != nil || modeltest.At(r.Decoded, "max_completion_tokens") == nil {
		t.Errorf("body %v", r.Decoded)
	}
	if modeltest.At(r.Decoded, "messages", 0, "role") != "system" || modeltest.At(r.Decoded, "messages", 0, "content") != "Link's base.\n\nYour notes." ||
		modeltest.At(r.Decoded, "messages", 1, "content") != "hi" {
		t.Errorf("messages %v", modeltest.At(r.Decoded, "messages"))
	}
}

// A call, and the round after it answering it, told to call nothing.
func TestToolRoundTrip(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{
		Text: "Let me look.",
		ToolCalls: []fakeprovider.ToolCall{
			{Name: "memory__search", Input: `{"query":"café","limit":5}`},
			{Name: "file__read", Input: `{"path":"notes.md"}`},
		},
	}, fakeprovider.Turn{Text: "You noted two cafés."})
	p, route := resolve(t, "openai/gpt-6-luna", openAIEnv(s))
	req := modeltest.Ask(route.APIModel, "what did I say about cafés?")
	req.Tools = []model.Tool{
		{Name: "memory__search", Description: "Search notes.", Schema: `{"type":"object","properties":{"query":{"type":"string"}}}`},
		{Name: "file__read"},
	}
	resp, err := p.Stream(t.Context(), req, modeltest.Ignore)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopToolUse || len(resp.Calls) != 2 || resp.Calls[0].Name != "memory__search" ||
		!strings.HasPrefix(resp.Calls[0].ID, "call_") || resp.Calls[0].Input != `{"query":"café","limit":5}` ||
		resp.Calls[1].Input != `{"path":"notes.md"}` || resp.Calls[0].ID == resp.Calls[1].ID || resp.Text != "Let me look." {
		t.Fatalf("answer %+v", resp)
	}
	first := s.Requests()[0].Decoded
	if modeltest.At(first, "tools", 0, "type") != "function" || modeltest.At(first, "tools", 0, "function", "parameters", "properties", "query", "type") != "string" ||
		modeltest.At(first, "tools", 1, "function", "parameters", "type") != "object" || modeltest.At(first, "tool_choice") != nil {
		t.Errorf("tools sent %v", modeltest.At(first, "tools"))
	}

	parts := []model.Part{{Kind: model.KindThinking, Text: "hidden"}, model.Text(resp.Text)}
	for _, c := range resp.Calls {
		parts = append(parts, model.ToolUse(c.ID, c.Name, c.Input))
	}
	req.Messages = append(req.Messages, modeltest.Assistant(parts...), modeltest.User(
		model.ToolResult(resp.Calls[0].ID, "2 notes", false),
		model.ToolResult(resp.Calls[1].ID, "no such file", true),
		model.Text("and be quick"),
	))
	req.ToolChoice = model.ToolNone
	if _, err := p.Stream(t.Context(), req, modeltest.Ignore); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[1]
	msgs, _ := modeltest.At(r.Decoded, "messages").([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages %v", msgs)
	}
	a := msgs[1]
	if modeltest.At(a, "role") != "assistant" || modeltest.At(a, "content") != "Let me look." || modeltest.At(a, "tool_calls", 0, "id") != resp.Calls[0].ID ||
		modeltest.At(a, "tool_calls", 0, "function", "arguments") != resp.Calls[0].Input || modeltest.At(a, "tool_calls", 1, "function", "name") != "file__read" {
		t.Errorf("assistant sent back as %v", a)
	}
	if modeltest.At(msgs[2], "role") != "tool" || modeltest.At(msgs[2], "tool_call_id") != resp.Calls[0].ID || modeltest.At(msgs[2], "content") != "2 notes" ||
		modeltest.At(msgs[3], "role") != "tool" || modeltest.At(msgs[3], "tool_call_id") != resp.Calls[1].ID || modeltest.At(msgs[3], "content") != "Error: no such file" ||
		modeltest.At(msgs[4], "role") != "user" || modeltest.At(msgs[4], "content") != "and be quick" {
		t.Errorf("answers sent as %v", msgs[2:])
	}
	if r.ToolChoice != "none" || len(r.Tools) != 2 {
		t.Errorf("tool_choice %q with tools %v", r.ToolChoice, r.Tools)
	}
}

// OpenRouter: its cost, reasoning, cache breakpoints for Anthropic's
// models, and the usage asked for.
func TestOpenRouter(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{
		Thinking: "Think it through, step by step.",
		Text:     "Forty-two.",
		Usage:    fakeprovider.Usage{In: 50, Out: 4, CacheRead: 3000, CacheWrite: 120},
		CostUSD:  0.001234,
	})
	env := map[string]string{model.EnvOpenRouterKey: "or-key", model.EnvOpenRouterURL: s.URL() + "/api/v1"}
	p, route := resolve(t, "anthropic/claude-opus-5.5", env)
	if route.Provider != model.ProviderOpenRouter || route.APIModel != "anthropic/claude-opus-5.5" {
		t.Fatalf("route %+v", route)
	}
	req := model.Request{Model: route.APIModel,
		System: []model.Section{{Text: "Base.", Cache: true}, {Text: "Model's.", Cache: true}, {Text: "Notes."}},
		Messages: []model.Message{
			modeltest.User(model.Text("one")), modeltest.Assistant(model.Text("1")),
			modeltest.User(model.Text("two")), modeltest.Assistant(model.Text("2")),
			modeltest.User(model.Text("three"), model.Image("image/png", "iVBORw0KGgo=")),
		}}
	var c modeltest.Collect
	resp, err := p.Stream(t.Context(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD != 0.001234 || resp.Provider != "openrouter" || resp.Usage != (model.Usage{In: 50, Out: 4, CacheRead: 3000, CacheWrite: 120}) {
		t.Errorf("response %+v", resp)
	}
	if len(c.Thinking) < 2 || strings.Join(c.Thinking, "") != "Think it through, step by step." ||
		len(resp.Thinking) != 1 || resp.Thinking[0].Text != "Think it through, step by step." || resp.Text != "Forty-two." {
		t.Errorf("thinking deltas %q, thinking %+v, text %q", c.Thinking, resp.Thinking, resp.Text)
	}
	r := s.Requests()[0]
	if r.Path != "/api/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer or-key" ||
		modeltest.At(r.Decoded, "usage", "include") != true || modeltest.At(r.Decoded, "stream_options", "include_usage") != true {
		t.Errorf("sent %s %v %v", r.Path, r.Header, r.Decoded)
	}
	sys := modeltest.At(r.Decoded, "messages", 0, "content")
	if modeltest.At(sys, 1, "cache_control", "type") != "ephemeral" || modeltest.At(sys, 0, "cache_control") != nil || modeltest.At(sys, 2, "cache_control") != nil || modeltest.At(sys, 2, "text") != "Notes." {
		t.Errorf("system %v", sys)
	}
	msgs, _ := modeltest.At(r.Decoded, "messages").([]any)
	if modeltest.At(msgs[1], "content") != "one" || modeltest.At(msgs[3], "content", 0, "cache_control", "type") != "ephemeral" ||
		modeltest.At(msgs[5], "content", 0, "cache_control", "type") != "ephemeral" || modeltest.At(msgs[5], "content", 1, "type") != "image_url" {
		t.Errorf("messages %v", msgs)
	}

	// Another maker's model through OpenRouter gets no breakpoints.
	p, route = resolve(t, "openai/gpt-6-luna", env)
	if _, err := p.Stream(t.Context(), modeltest.Ask(route.APIModel, "hi"), modeltest.Ignore); err != nil {
		t.Fatal(err)
	}
	if b := string(s.Requests()[1].Body); strings.Contains(b, "cache_control") || modeltest.At(s.Requests()[1].Decoded, "model") != "openai/gpt-6-luna" {
		t.Errorf("body %s", b)
	}
}

func TestOllama(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Text: "hello from qwen", Thinking: "hmm"})
	p, route := resolve(t, "ollama/qwen3:8b", map[string]string{model.EnvOllamaHost: s.URL()})
	resp, err := p.Stream(t.Context(), modeltest.Ask("ollama/qwen3:8b", "hi"), modeltest.Ignore)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.Path != "/v1/chat/completions" || r.Model != "qwen3:8b" || route.APIModel != "qwen3:8b" || r.Header.Get("Authorization") != "Bearer "+OllamaKey {
		t.Errorf("sent %s model %q, %v", r.Path, r.Model, r.Header)
	}
	if resp.Provider != "ollama" || resp.Text != "hello from qwen" || len(resp.Thinking) != 1 {
		t.Errorf("response %+v", resp)
	}
}

// Any compatible server: by its address, named by its own name, with or
// without a key.
func TestCompatible(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Text: "from LM Studio"})
	p, err := New(model.Route{}, Options{BaseURL: s.URL() + "/v1", Name: "lmstudio"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(t.Context(), modeltest.Ask("local-model", "hi"), modeltest.Ignore)
	if !errors.Is(err, model.ErrAuth) || s.Requests()[0].Header.Get("Authorization") != "" {
		t.Errorf("no key: %v", err)
	}
	p, err = New(model.Route{}, Options{BaseURL: s.URL() + "/v1", Name: "lmstudio", APIKey: "lm", Headers: map[string]string{"X-Title": "Link"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(t.Context(), modeltest.Ask("local-model", "hi"), modeltest.Ignore)
	if err != nil || resp.Provider != "lmstudio" || p.Name() != "lmstudio" || resp.Text != "from LM Studio" {
		t.Errorf("= %+v, %v", resp, err)
	}
	if h := s.Requests()[1].Header; h.Get("Authorization") != "Bearer lm" || h.Get("X-Title") != "Link" || modeltest.At(s.Requests()[1].Decoded, "max_tokens") != nil {
		t.Errorf("headers %v", h)
	}
}

func TestMedia(t *testing.T) {
	s := modeltest.NewServer(t)
	p, route := resolve(t, "openai/gpt-6-luna", openAIEnv(s))
	req := model.Request{Model: route.APIModel, Messages: []model.Message{modeltest.User(
		model.Text("look"),
		model.Image("image/png", "iVBORw0KGgo="),
		model.Audio("audio/wav", "UklGRg=="),
		model.Audio("audio/ogg", "T2dnUw=="),
		model.Document("application/pdf", "report.pdf", "JVBERi0xLjQ="),
		model.TextDocument("text/markdown", "notes.md", "# Notes"),
		model.Document("application/zip", "a.zip", "UEsDBA=="),
	)}}
	if _, err := p.Stream(t.Context(), req, modeltest.Ignore); err != nil {
		t.Fatal(err)
	}
	c := modeltest.At(s.Requests()[0].Decoded, "messages", 0, "content")
	if modeltest.At(c, 0, "type") != "text" || modeltest.At(c, 0, "text") != "look" {
		t.Errorf("text sent as %v", modeltest.At(c, 0))
	}
	if modeltest.At(c, 1, "type") != "image_url" || modeltest.At(c, 1, "image_url", "url") != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("image sent as %v", modeltest.At(c, 1))
	}
	if modeltest.At(c, 2, "type") != "input_audio" || modeltest.At(c, 2, "input_audio", "format") != "wav" || modeltest.At(c, 2, "input_audio", "data") != "UklGRg==" {
		t.Errorf("wav sent as %v", modeltest.At(c, 2))
	}
	if modeltest.At(c, 3, "type") != "text" || !strings.Contains(modeltest.At(c, 3, "text").(string), "audio file (audio/ogg") {
		t.Errorf("ogg sent as %v", modeltest.At(c, 3))
	}
	if modeltest.At(c, 4, "type") != "file" || modeltest.At(c, 4, "file", "file_data") != "data:application/pdf;base64,JVBERi0xLjQ=" || modeltest.At(c, 4, "file", "filename") != "report.pdf" {
		t.Errorf("pdf sent as %v", modeltest.At(c, 4))
	}
	if modeltest.At(c, 5, "type") != "text" || modeltest.At(c, 5, "text") != "A document named \"notes.md\" (text/markdown):\n\n# Notes" {
		t.Errorf("text document sent as %v", modeltest.At(c, 5))
	}
	if modeltest.At(c, 6, "type") != "text" || !strings.Contains(modeltest.At(c, 6, "text").(string), "application/zip") {
		t.Errorf("zip sent as %v", modeltest.At(c, 6))
	}
}

func TestErrors(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(
		fakeprovider.Turn{Status: 400, ErrorBody: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens."},
		// Ollama's shape: the error a string.
		fakeprovider.Turn{Status: 400, ErrorBody: `{"error":"the input length exceeds the context length"}`},
		fakeprovider.Turn{Status: 429, ErrorBody: "Rate limit reached"},
	)
	p, route := resolve(t, "openai/gpt-6-luna", openAIEnv(s))
	req := modeltest.Ask(route.APIModel, "hi")
	var perr *model.Error
	_, err := p.Stream(t.Context(), req, modeltest.Ignore)
	if !errors.Is(err, model.ErrPromptTooLong) || !errors.As(err, &perr) || perr.Status != 400 || !strings.Contains(err.Error(), "128000") {
		t.Errorf("too long: %v", err)
	}
	_, err = p.Stream(t.Context(), req, modeltest.Ignore)
	if !errors.Is(err, model.ErrPromptTooLong) || !strings.Contains(err.Error(), "exceeds the context length") {
		t.Errorf("Ollama's too long: %v", err)
	}
	_, err = p.Stream(t.Context(), req, modeltest.Ignore)
	if !errors.As(err, &perr) || perr.Status != 429 || !perr.Retryable() || errors.Is(err, model.ErrPromptTooLong) {
		t.Errorf("rate limited: %v", err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (no retries)", n)
	}

	stop := errors.New("caller gone")
	s.Script(fakeprovider.Turn{Text: "a long answer in pieces"})
	if _, err := p.Stream(t.Context(), req, func(model.Delta) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("onDelta's error: %v", err)
	}

	s.Script(fakeprovider.Turn{Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Stream(ctx, req, modeltest.Ignore); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung call: %v", err)
	}
}

func TestRetries(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Status: 503, ErrorBody: "busy"}, fakeprovider.Turn{Text: "after a retry"})
	route, _ := model.Resolve("openai/gpt-6-luna", openAIEnv(s))
	p, err := New(route, Options{APIKey: "k", Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(t.Context(), modeltest.Ask(route.APIModel, "hi"), modeltest.Ignore)
	if err != nil || resp.Text != "after a retry" || len(s.Requests()) != 2 {
		t.Errorf("= %+v, %v after %d requests", resp, err, len(s.Requests()))
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		route model.Route
		o     Options
		want  string // in the error; "" for none
	}{
		{model.Route{Provider: model.ProviderOpenAI, KeyEnv: model.EnvOpenAIKey}, Options{}, "OPENAI_API_KEY"},
		{model.Route{Provider: model.ProviderOpenRouter}, Options{}, "OPENROUTER_API_KEY"},
		{model.Route{Provider: model.ProviderAnthropic}, Options{APIKey: "k"}, "Messages API"},
		{model.Route{Provider: "vllm"}, Options{}, "no base URL"},
		{model.Route{Provider: model.ProviderOpenAI}, Options{APIKey: "k", Retries: -1}, "retries"},
		{model.Route{Provider: model.ProviderOllama}, Options{}, ""},
		{model.Route{Provider: "vllm", BaseURL: "http://127.0.0.1:8000/v1"}, Options{}, ""},
	} {
		_, err := New(tc.route, tc.o)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("New(%+v, %+v) = %v, want %q", tc.route, tc.o, err, tc.want)
		}
	}
}

// BenchmarkStream is one streamed answer of three chunks from the fake
// provider on loopback: the provider's cost per call, with the SDK's.
func BenchmarkStream(b *testing.B) {
	s := fakeprovider.New()
	defer s.Close()
	p, err := New(model.Route{Provider: model.ProviderOpenAI, BaseURL: s.URL() + "/v1"}, Options{APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	req := modeltest.Ask("gpt-6-luna", "hi")
	req.System = []model.Section{{Text: strings.Repeat("Link's base. ", 200), Cache: true}}
	req.Tools = []model.Tool{{Name: "memory__search"}}
	for b.Loop() {
		if _, err := p.Stream(b.Context(), req, modeltest.Ignore); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargePrompt is one call whose user message is a text of 8 MiB,
// to a server that reads the body and drops it: the bytes the provider
// allocates for it over the text's size (alloc/prompt), which the SDK's
// encoder makes several times the text, and jsonx about none.
func BenchmarkLargePrompt(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p, err := New(model.Route{Provider: model.ProviderOpenAI, BaseURL: srv.URL + "/v1"}, Options{APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	const size = 8 << 20
	text := strings.Repeat("a <long> \"prompt\" é\n", size/22)
	req := modeltest.Ask("gpt-6-luna", "[header]")
	req.Messages[0].Parts = append(req.Messages[0].Parts, model.Text(text))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Stream(b.Context(), req, modeltest.Ignore); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/float64(len(text)), "alloc/prompt")
}

// Large texts, an image, a tool's answer and two assistant messages in a
// row (merged into one) are sent whole, quoted as they are read, not
// copied by the SDK's encoder; a request sent again after a 429 sends
// the same bytes, and no placeholder is ever sent.
func TestLargeParts(t *testing.T) {
	s := modeltest.NewServer(t)
	s.Script(fakeprovider.Turn{Status: 429, ErrorBody: "slow down"}, fakeprovider.Turn{Text: "read"})
	p, err := New(model.Route{Provider: model.ProviderOpenAI, BaseURL: s.URL() + "/v1"}, Options{APIKey: "k", Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a <long> \"prompt\" é\n", 1<<15)
	data := strings.Repeat("iVBO", 1<<15)
	said := strings.Repeat("an answer ", 1<<13)
	req := model.Request{Model: "gpt-6-luna", System: []model.Section{{Text: text}}, Messages: []model.Message{
		modeltest.User(model.Text("[header]"), model.Text(text), model.Image("image/png", data)),
		modeltest.Assistant(model.Text(said), model.ToolUse("call_1", "memory__search", `{}`)),
		modeltest.Assistant(model.Text(said)),
		modeltest.User(model.ToolResult("call_1", text, false), model.Text(text)),
	}}
	resp, err := p.Stream(t.Context(), req, modeltest.Ignore)
	if err != nil || resp.Text != "read" {
		t.Fatalf("answered %q, %v", resp.Text, err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("%d requests; the second the first's bytes: %v", len(reqs), len(reqs) == 2 && bytes.Equal(reqs[0].Body, reqs[1].Body))
	}
	if bytes.Contains(reqs[1].Body, []byte("lnk-hole-")) {
		t.Fatal("a placeholder was sent")
	}
	m := modeltest.At(reqs[1].Decoded, "messages")
	for _, c := range []struct {
		got  any
		want string
	}{
		{modeltest.At(m, 0, "content"), text},
		{modeltest.At(m, 1, "content", 0, "text"), "[header]"},
		{modeltest.At(m, 1, "content", 1, "text"), text},
		{modeltest.At(m, 1, "content", 2, "image_url", "url"), "data:image/png;base64," + data},
		{modeltest.At(m, 2, "content"), said + "\n\n" + said},
		{modeltest.At(m, 3, "content"), text},
		{modeltest.At(m, 4, "content"), text},
	} {
		if c.got != c.want {
			t.Fatalf("sent %.300v, want %.300s", c.got, c.want)
		}
	}
}
