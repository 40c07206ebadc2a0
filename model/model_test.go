package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ name, maker, model string }{
		{"anthropic/claude-opus-5-5", "anthropic", "claude-opus-5-5"},
		{"anthropic/claude-opus-5.5", "anthropic", "claude-opus-5.5"},
		{"ollama/qwen3:8b", "ollama", "qwen3:8b"},
		{"claude-opus-5-5", "", "claude-opus-5-5"},
		{"meta-llama/llama-3.1-8b-instruct:free", "meta-llama", "llama-3.1-8b-instruct:free"},
		{"ollama/library/qwen3", "ollama", "library/qwen3"},
		{"/x", "", "/x"},
		{"x/", "", "x/"},
		{"", "", ""},
	} {
		maker, model := Parse(tc.name)
		if maker != tc.maker || model != tc.model {
			t.Errorf("Parse(%q) = %q, %q; want %q, %q", tc.name, maker, model, tc.maker, tc.model)
		}
	}
}

func TestResolve(t *testing.T) {
	all := map[string]string{EnvAnthropicKey: "a", EnvOpenAIKey: "o", EnvOpenRouterKey: "r"}
	onlyRouter := map[string]string{EnvOpenRouterKey: "r", EnvAnthropicKey: ""}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Route
	}{
		{"anthropic/claude-opus-5-5", all, Route{ProviderAnthropic, AnthropicURL, "claude-opus-5-5", EnvAnthropicKey}},
		{"claude-opus-5-5", all, Route{ProviderAnthropic, AnthropicURL, "claude-opus-5-5", EnvAnthropicKey}},
		{"openai/gpt-6-luna", all, Route{ProviderOpenAI, OpenAIURL, "gpt-6-luna", EnvOpenAIKey}},
		{"google/gemini-3-pro", all, Route{ProviderOpenRouter, OpenRouterURL, "google/gemini-3-pro", EnvOpenRouterKey}},
		// OpenRouter's name goes to OpenRouter as written, never made Anthropic's.
		{"anthropic/claude-opus-5.5", onlyRouter, Route{ProviderOpenRouter, OpenRouterURL, "anthropic/claude-opus-5.5", EnvOpenRouterKey}},
		{"openai/gpt-6-luna", onlyRouter, Route{ProviderOpenRouter, OpenRouterURL, "openai/gpt-6-luna", EnvOpenRouterKey}},
		{"ollama/qwen3:8b", nil, Route{ProviderOllama, OllamaURL, "qwen3:8b", ""}},
		{"ollama/qwen3:8b", map[string]string{EnvOllamaHost: "gpu.lan"}, Route{ProviderOllama, "http://gpu.lan:11434", "qwen3:8b", ""}},
		{"ollama/qwen3:8b", map[string]string{EnvOllamaHost: "10.0.0.2:9999"}, Route{ProviderOllama, "http://10.0.0.2:9999", "qwen3:8b", ""}},
		{"ollama/qwen3:8b", map[string]string{EnvOllamaHost: "https://o.example/"}, Route{ProviderOllama, "https://o.example:443", "qwen3:8b", ""}},
		{"anthropic/claude-opus-5-5", map[string]string{EnvAnthropicKey: "a", EnvAnthropicBaseURL: "http://127.0.0.1:5/"},
			Route{ProviderAnthropic, "http://127.0.0.1:5", "claude-opus-5-5", EnvAnthropicKey}},
		{"openai/gpt-6-luna", map[string]string{EnvOpenAIKey: "o", EnvOpenAIBaseURL: "http://127.0.0.1:5/v1"},
			Route{ProviderOpenAI, "http://127.0.0.1:5/v1", "gpt-6-luna", EnvOpenAIKey}},
	} {
		got, err := Resolve(tc.name, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q, %v) = %+v, %v; want %+v", tc.name, tc.env, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		says string
	}{
		{"claude-opus-5-5", onlyRouter, EnvAnthropicKey},
		{"anthropic/claude-opus-5-5", nil, EnvAnthropicKey},
		{"openai/gpt-6-luna", map[string]string{EnvAnthropicKey: "a"}, EnvOpenAIKey},
		{"google/gemini-3-pro", map[string]string{EnvAnthropicKey: "a", EnvOpenAIKey: "o"}, EnvOpenRouterKey},
		{"gpt-6-luna", all, "maker/name"},
		{"qwen3:8b", map[string]string{EnvOllamaHost: "h"}, "ollama/"},
		{"", all, "maker/name"},
		{" anthropic/x", all, "spaces"},
	} {
		_, err := Resolve(tc.name, tc.env)
		if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Resolve(%q, %v) = %v; want ErrNoProvider saying %q", tc.name, tc.env, err, tc.says)
		}
	}
}

func TestClassifyError(t *testing.T) {
	for _, tc := range []struct {
		status  int
		body    string
		want    error
		message string
		retry   bool
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			ErrPromptTooLong, "prompt is too long: 210000 tokens > 200000 maximum", false},
		{400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			ErrPromptTooLong, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", false},
		{400, `{"error":{"message":"Input too large","code":"context_length_exceeded"}}`, ErrPromptTooLong, "Input too large", false},
		{500, `{"error":"prompt exceeds the context window of the model"}`, ErrPromptTooLong, "prompt exceeds the context window of the model", true},
		{0, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`, ErrPromptTooLong, "prompt is too long", false},
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, ErrAuth, "invalid x-api-key", false},
		{403, `forbidden`, ErrAuth, "forbidden", false},
		{429, `{"error":{"message":"Rate limit reached"}}`, nil, "Rate limit reached", true},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, "Overloaded", true},
		{502, ``, nil, "no message", true},
		{400, `{"message":"bad thing"}`, nil, "bad thing", false},
	} {
		err := ClassifyError(tc.status, tc.body)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("ClassifyError(%d, %q) = %T, want *Error", tc.status, tc.body, err)
		}
		if e.Message != tc.message || e.Status != tc.status || e.Retryable() != tc.retry {
			t.Errorf("ClassifyError(%d, %q) = %+v retryable %v; want message %q retryable %v", tc.status, tc.body, e, e.Retryable(), tc.message, tc.retry)
		}
		for _, s := range []error{ErrPromptTooLong, ErrAuth} {
			if errors.Is(err, s) != (s == tc.want) {
				t.Errorf("ClassifyError(%d, %q): errors.Is(%v) = %v", tc.status, tc.body, s, !(s == tc.want))
			}
		}
	}
	if got := ClassifyError(400, `{"error":{"message":"nope"}}`).Error(); got != "provider: 400 Bad Request: nope" {
		t.Errorf("Error() = %q", got)
	}
}

func TestNormalizeStop(t *testing.T) {
	for raw, want := range map[string]StopReason{
		"end_turn": StopEnd, "stop": StopEnd, "STOP": StopEnd, "stop_sequence": StopEnd,
		"tool_use": StopToolUse, "tool_calls": StopToolUse,
		"max_tokens": StopMaxTokens, "length": StopMaxTokens, "MAX_TOKENS": StopMaxTokens, "max_output_tokens": StopMaxTokens,
		"refusal": StopRefusal, "content_filter": StopRefusal, "SAFETY": StopRefusal,
		"weird": "weird",
	} {
		if got := NormalizeStop(raw); got != want {
			t.Errorf("NormalizeStop(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestTakes(t *testing.T) {
	over := map[string]Inputs{
		"ollama/llava:7b": {ModalityImage: true},
		"anthropic":       {ModalityAudio: true},
		"openai/gpt-text": {ModalityImage: false},
	}
	for _, tc := range []struct {
		name string
		m    Modality
		want bool
	}{
		{"anthropic/claude-opus-5-5", ModalityImage, true},
		{"claude-opus-5-5", ModalityDocument, true},
		{"anthropic/claude-opus-5-5", ModalityAudio, true}, // the maker's override
		{"claude-opus-5-5", ModalityAudio, true},
		{"google/gemini-3-pro", ModalityAudio, true},
		{"openai/gpt-6-luna", ModalityImage, true},
		{"openai/gpt-text", ModalityImage, false}, // the name's override beats the table
		{"openai/gpt-text", ModalityDocument, true},
		{"ollama/qwen3:8b", ModalityImage, false},
		{"ollama/llava:7b", ModalityImage, true},
		{"unknown/thing", ModalityImage, false},
	} {
		if got := Takes(tc.name, tc.m, over); got != tc.want {
			t.Errorf("Takes(%q, %s) = %v, want %v", tc.name, tc.m, got, tc.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	in := []Message{
		{Role: RoleUser, Parts: []Part{Text("look"), Image("image/png", strings.Repeat("A", 4000)), Audio("audio/ogg", "AAAA")}},
		{Role: RoleAssistant, Parts: []Part{Text("ok")}},
		{Role: RoleUser, Parts: []Part{Document("application/pdf", "cv.pdf", "AAAA"), TextDocument("text/plain", "a.txt", "hi")}},
	}
	takesImages := func(m Modality) bool { return m == ModalityImage }
	out := Substitute(in, takesImages)
	if in[0].Parts[2].Kind != KindAudio || in[2].Parts[0].Kind != KindDocument {
		t.Fatal("Substitute changed its input")
	}
	if out[0].Parts[1].Kind != KindImage {
		t.Errorf("image replaced though taken: %+v", out[0].Parts[1])
	}
	if p := out[0].Parts[2]; p.Kind != KindText || p.Text != "[An audio file (audio/ogg, 3 bytes) was sent here. This model doesn't take audio files, so it wasn't passed on.]" {
		t.Errorf("audio part became %+v", p)
	}
	if p := out[2].Parts[0]; p.Kind != KindText || p.Text != `[A document (application/pdf, 3 bytes) named "cv.pdf" was sent here. This model doesn't take documents, so it wasn't passed on.]` {
		t.Errorf("document part became %+v", p)
	}
	if p := out[2].Parts[1]; p.Kind != KindDocument {
		t.Errorf("a text document was replaced: %+v", p)
	}
	takesAll := func(Modality) bool { return true }
	if allocs := testing.AllocsPerRun(100, func() { out = Substitute(in, takesAll) }); allocs != 0 {
		t.Errorf("Substitute of parts all taken made %v allocations, want 0 (msgs itself)", allocs)
	}
	if len(out) != len(in) || &out[0] != &in[0] || cap(out) != len(in) {
		t.Errorf("Substitute of parts all taken: len %d cap %d, want msgs itself, capacity its length %d", len(out), cap(out), len(in))
	}
	if out := Substitute(nil, takesAll); out == nil || len(out) != 0 {
		t.Errorf("Substitute(nil) = %#v, want empty, not nil", out)
	}
	if got := Unsent(Image("image/jpeg", strings.Repeat("A", 1398104))); !strings.Contains(got, "An image (image/jpeg, 1.0 MB)") {
		t.Errorf("Unsent(1 MB image) = %q", got)
	}
}

func TestLastUserText(t *testing.T) {
	r := Request{Messages: []Message{
		{Role: RoleUser, Parts: []Part{Text("first")}},
		{Role: RoleAssistant, Parts: []Part{Text("answer"), ToolUse("c1", "memory__search", `{}`)}},
		{Role: RoleUser, Parts: []Part{ToolResult("c1", "found", false)}},
	}}
	if got := r.LastUserText(); got != "first" {
		t.Errorf("LastUserText = %q, want first (a tool result isn't what the user said)", got)
	}
	r.Messages = append(r.Messages, Message{Role: RoleUser, Parts: []Part{Text("a"), Image("image/png", "AA"), Text("b")}})
	if got := r.LastUserText(); got != "a\nb" {
		t.Errorf("LastUserText = %q", got)
	}
}

// The answer's parts convert to the store's as they are, so an answer event
// keeps what the provider said.
func TestStoreConversion(t *testing.T) {
	resp := Response{
		Thinking: []Thinking{{Text: "t", Signature: "s", Redacted: "r"}},
		Calls:    []ToolCall{{ID: "1", Name: "memory__search", Input: `{"q":"x"}`}},
		Usage:    Usage{In: 1, Out: 2, CacheRead: 3, CacheWrite: 4},
	}
	u := store.Usage(resp.Usage)
	c := store.ToolCall(resp.Calls[0])
	th := store.Thinking(resp.Thinking[0])
	if u.CacheWrite != 4 || c.Input != `{"q":"x"}` || th.Signature != "s" {
		t.Errorf("converted %+v %+v %+v", u, c, th)
	}
}
