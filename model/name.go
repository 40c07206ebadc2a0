package model

import (
	"errors"
	"fmt"
	"strings"
)

// Providers Resolve routes to.
const (
	ProviderAnthropic  = "anthropic"
	ProviderOpenAI     = "openai"
	ProviderOpenRouter = "openrouter"
	ProviderOllama     = "ollama"
)

// The environment's keys Resolve reads.
const (
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenRouterKey    = "OPENROUTER_API_KEY"
	EnvOllamaHost       = "OLLAMA_HOST"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvOpenRouterURL    = "OPENROUTER_BASE_URL"
)

// The providers' own addresses, used unless the environment names another.
const (
	AnthropicURL  = "https://api.anthropic.com"    // the Messages API is at /v1/messages
	OpenAIURL     = "https://api.openai.com/v1"    // /chat/completions, /responses
	OpenRouterURL = "https://openrouter.ai/api/v1" // /chat/completions
	OllamaURL     = "http://127.0.0.1:11434"       // /api/chat, /api/show
)

// ErrNoProvider: no provider in the environment serves the model named.
var ErrNoProvider = errors.New("no provider for the model")

// Route says which provider serves a model, where, under which name, and
// with which key.
type Route struct {
	// Provider is one of ProviderAnthropic, ProviderOpenAI,
	// ProviderOpenRouter, ProviderOllama.
	Provider string
	// BaseURL is the provider's address: Anthropic's without /v1 (as
	// ANTHROPIC_BASE_URL), an OpenAI-compatible one with it (as
	// OPENAI_BASE_URL), Ollama's host.
	BaseURL string
	// APIModel is the name the provider's API wants: claude-opus-5-5 for
	// Anthropic, anthropic/claude-opus-5.5 for OpenRouter, qwen3:8b for
	// Ollama.
	APIModel string
	// KeyEnv names the environment variable holding the key; "" for a
	// runtime that takes none.
	KeyEnv string
}

// Parse splits a model's name into its maker and its model: OpenRouter's
// anthropic/claude-opus-5.5 is ("anthropic", "claude-opus-5.5"), a
// runtime's ollama/qwen3:8b is ("ollama", "qwen3:8b"), and a provider's own
// name without a maker, claude-opus-5-5, is ("", "claude-opus-5-5"). The
// name is cut at its first slash.
func Parse(name string) (maker, model string) {
	m, rest, ok := strings.Cut(name, "/")
	if !ok || m == "" || rest == "" {
		return "", name
	}
	return m, rest
}

// Resolve says which provider serves the model named, given the
// environment env (a variable set to "" counts as unset):
//
//   - ollama/<name> goes to Ollama at OLLAMA_HOST (else 127.0.0.1:11434),
//     as <name>;
//   - anthropic/<name>, and a bare claude-... name, go to Anthropic when
//     ANTHROPIC_API_KEY is set, as <name>;
//   - openai/<name> goes to OpenAI when OPENAI_API_KEY is set, as <name>;
//   - any other maker/name (and those above without their key) goes to
//     OpenRouter when OPENROUTER_API_KEY is set, as the whole name.
//
// A name is passed on as written, never changed into another provider's
// name for the same model (OpenRouter's anthropic/claude-opus-5.5 is not
// Anthropic's claude-opus-5-5): a name no provider in env serves gives an
// error wrapping ErrNoProvider that says which key to set.
// ANTHROPIC_BASE_URL, OPENAI_BASE_URL and OPENROUTER_BASE_URL replace the
// providers' addresses.
func Resolve(name string, env map[string]string) (Route, error) {
	if strings.TrimSpace(name) != name || name == "" {
		return Route{}, fmt.Errorf("resolve model %q: %w: a name is maker/name, without spaces", name, ErrNoProvider)
	}
	maker, m := Parse(name)
	url := func(key, def string) string {
		if u := env[key]; u != "" {
			return strings.TrimRight(u, "/")
		}
		return def
	}
	switch {
	case maker == "ollama":
		return Route{Provider: ProviderOllama, BaseURL: ollamaURL(env[EnvOllamaHost]), APIModel: m}, nil
	case maker == "anthropic" && env[EnvAnthropicKey] != "",
		maker == "" && strings.HasPrefix(m, "claude-") && env[EnvAnthropicKey] != "":
		return Route{Provider: ProviderAnthropic, BaseURL: url(EnvAnthropicBaseURL, AnthropicURL), APIModel: m, KeyEnv: EnvAnthropicKey}, nil
	case maker == "openai" && env[EnvOpenAIKey] != "":
		return Route{Provider: ProviderOpenAI, BaseURL: url(EnvOpenAIBaseURL, OpenAIURL), APIModel: m, KeyEnv: EnvOpenAIKey}, nil
	case maker != "" && env[EnvOpenRouterKey] != "":
		return Route{Provider: ProviderOpenRouter, BaseURL: url(EnvOpenRouterURL, OpenRouterURL), APIModel: name, KeyEnv: EnvOpenRouterKey}, nil
	}
	switch {
	case maker == "" && strings.HasPrefix(m, "claude-"):
		return Route{}, fmt.Errorf("resolve model %q: %w: it is Anthropic's name, so set %s (or name it as OpenRouter does, anthropic/<name>, and set %s)", name, ErrNoProvider, EnvAnthropicKey, EnvOpenRouterKey)
	case maker == "":
		return Route{}, fmt.Errorf("resolve model %q: %w: name it maker/name as OpenRouter does (anthropic/claude-opus-5.5), or ollama/<name> for a model Ollama runs", name, ErrNoProvider)
	case maker == "anthropic":
		return Route{}, fmt.Errorf("resolve model %q: %w: set %s or %s", name, ErrNoProvider, EnvAnthropicKey, EnvOpenRouterKey)
	case maker == "openai":
		return Route{}, fmt.Errorf("resolve model %q: %w: set %s or %s", name, ErrNoProvider, EnvOpenAIKey, EnvOpenRouterKey)
	}
	return Route{}, fmt.Errorf("resolve model %q: %w: set %s", name, ErrNoProvider, EnvOpenRouterKey)
}

// ollamaURL makes OLLAMA_HOST, which may be host, host:port or a URL, an
// address.
func ollamaURL(host string) string {
	host = strings.TrimRight(strings.TrimSpace(host), "/")
	if host == "" {
		return OllamaURL
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	scheme, rest, _ := strings.Cut(host, "://")
	if !strings.Contains(rest, ":") && !strings.Contains(rest, "/") && !strings.HasPrefix(rest, "[") {
		if scheme == "https" {
			rest += ":443"
		} else {
			rest += ":11434"
		}
	}
	return scheme + "://" + rest
}
