package serve

import (
	"log/slog"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/facts"
	"github.com/lnk-dev/link/model/scripted"
)

// Default models, one for each provider a key in the environment sets
// up, as each provider names it.
const (
	DefaultAnthropic  = "anthropic/claude-opus-5-5"
	DefaultOpenAI     = "openai/gpt-6-luna"
	DefaultOpenRouter = "anthropic/claude-opus-5.5"
	DefaultOllama     = "ollama/qwen3:8b"
)

// Pick is the model an agent started without one runs on, and why.
type Pick struct {
	Model string // the model's name, or scripted.OfflineName
	// Env names the variable that chose it; "" for the offline model.
	Env string
}

// Offline says whether the pick is the offline model.
func (p Pick) Offline() bool { return p.Model == scripted.OfflineName }

// DefaultModel picks a model by the first provider env sets up, in the
// order ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY,
// OLLAMA_HOST; with none, the offline model, which says how to set one.
func DefaultModel(env map[string]string) Pick {
	for _, c := range []Pick{
		{DefaultAnthropic, model.EnvAnthropicKey},
		{DefaultOpenAI, model.EnvOpenAIKey},
		{DefaultOpenRouter, model.EnvOpenRouterKey},
		{DefaultOllama, model.EnvOllamaHost},
	} {
		if env[c.Env] != "" {
			return c
		}
	}
	return Pick{Model: scripted.OfflineName}
}

// modelFacts is what the harness knows of models: the user's file
// (~/.lnk/model-facts.toml, read at start; one that doesn't read is
// logged and passed over, so Link's facts still hold), Ollama as env
// says, and Link's file.
func modelFacts(env map[string]string, logger *slog.Logger) *facts.Resolver {
	path, err := facts.UserFile()
	if err != nil {
		path = ""
	}
	r, err := facts.ForEnv(path, env, 0)
	if err != nil {
		if logger != nil {
			logger.Warn("read the model facts", "err", err.Error())
		}
		r, _ = facts.ForEnv("", env, 0)
	}
	return r
}
