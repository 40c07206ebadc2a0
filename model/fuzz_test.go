package model

import (
	"errors"
	"strings"
	"testing"
)

// A provider's error body, any bytes, classifies without a panic into an
// *Error whose message is never empty.
func FuzzClassifyError(f *testing.F) {
	for _, s := range []string{
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 1 tokens > 0 maximum"}}`,
		`{"error":{"message":"maximum context length","code":"context_length_exceeded"}}`,
		`{"error":"context window exceeded"}`, `{"message":"m"}`, `{"detail":"d"}`, `{"error":null}`, `{"error":5}`,
		`not json`, ``, `[]`, `{"error":{"message":""}}`, strings.Repeat("x", 5000),
	} {
		f.Add(400, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		err := ClassifyError(status, body)
		var e *Error
		if !errors.As(err, &e) || e.Message == "" || e.Status != status || err.Error() == "" {
			t.Fatalf("ClassifyError(%d, %q) = %#v", status, body, err)
		}
		if errors.Is(err, ErrPromptTooLong) && errors.Is(err, ErrAuth) {
			t.Fatalf("both sentinels: %v", err)
		}
		if len(e.Message) > 2048+3 {
			t.Fatalf("message not bounded: %d bytes", len(e.Message))
		}
	})
}

// Any name resolves or refuses with ErrNoProvider, and a route never
// changes the name it was given beyond cutting off its maker.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"anthropic/claude-opus-5-5", "claude-x", "ollama/qwen3:8b", "a/b/c", "/", "", " x", "openai/gpt"} {
		f.Add(s, true, true, "")
		f.Add(s, false, false, "h:1")
	}
	f.Fuzz(func(t *testing.T, name string, anthropic, router bool, host string) {
		env := map[string]string{EnvOllamaHost: host, EnvOpenAIKey: "o"}
		if anthropic {
			env[EnvAnthropicKey] = "a"
		}
		if router {
			env[EnvOpenRouterKey] = "r"
		}
		r, err := Resolve(name, env)
		if err != nil {
			if !errors.Is(err, ErrNoProvider) {
				t.Fatalf("Resolve(%q) = %v", name, err)
			}
			return
		}
		_, m := Parse(name)
		if r.APIModel != name && r.APIModel != m {
			t.Fatalf("Resolve(%q) = %+v: the name was changed", name, r)
		}
		if r.BaseURL == "" || r.Provider == "" {
			t.Fatalf("Resolve(%q) = %+v", name, r)
		}
	})
}
