package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/store"
)

// Where an agent's model came from, as lnk agent status says it.
const (
	modelFromFlag    = "flag"        // --model
	modelFromEnv     = "env"         // $LNK_MODEL
	modelFromConfig  = "config.json" // the agent's config.json "model"
	modelFromDefault = "default"     // the first provider key set, else offline
)

// modelChoice is the model a harness started here runs the agent on, and
// why.
type modelChoice struct {
	Model string `json:"model"`
	From  string `json:"from"` // one of the modelFrom... values
	// Env is the variable that chose a default model ("" for the
	// offline model, or a choice not the default's).
	Env string `json:"env,omitempty"`
	// NoKey, when not "", says that no provider in the environment
	// serves Model and which variable to set: the offline model answers
	// in its place, saying the same.
	NoKey string `json:"noKey,omitempty"`
}

// chooseModel is the model of a harness started here for p: flag's (from
// --model), else $LNK_MODEL, else config.json's, else the default.
func chooseModel(ctx context.Context, p store.Paths, flag string, env map[string]string) (modelChoice, error) {
	set, err := serve.ReadSettings(ctx, p, "")
	if err != nil {
		return modelChoice{}, err
	}
	var c modelChoice
	switch {
	case flag != "":
		c = modelChoice{Model: flag, From: modelFromFlag}
	case env["LNK_MODEL"] != "":
		c = modelChoice{Model: env["LNK_MODEL"], From: modelFromEnv}
	case set.Model != "":
		c = modelChoice{Model: set.Model, From: modelFromConfig}
	default:
		pick := serve.DefaultModel(env)
		c = modelChoice{Model: pick.Model, From: modelFromDefault, Env: pick.Env}
	}
	if err := serve.NewProviders(env).Serves(set.Alias(c.Model)); err != nil {
		c.NoKey = err.Error()
	}
	return c, nil
}

// offline says the choice is the offline model, no key set.
func (c modelChoice) offline() bool { return c.From == modelFromDefault && c.Env == "" }

// harnessModel is the name serve.Config.Model takes: "" for config.json's,
// which the harness reads itself.
func (c modelChoice) harnessModel() string {
	if c.From == modelFromConfig {
		return ""
	}
	return c.Model
}

// why says where the choice came from, in words.
func (c modelChoice) why() string {
	switch c.From {
	case modelFromFlag:
		return "--model says so"
	case modelFromEnv:
		return "$LNK_MODEL says so"
	case modelFromConfig:
		return "its config.json says so"
	}
	if c.Env == "" {
		return "no model provider key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or OLLAMA_HOST)"
	}
	return c.Env + " is set"
}

// say tells w, as lnk agent chat starts the agent, which model it runs
// on and why, and when no provider serves it, which variable to set.
func (c modelChoice) say(w io.Writer, agent string) {
	switch {
	case c.offline():
		fmt.Fprintf(w, "lnk: no model provider key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or OLLAMA_HOST), so agent %s runs on the offline scripted model: its answers, labelled [offline model], only repeat what you say\n", agent)
		return
	case c.From == modelFromConfig:
		fmt.Fprintf(w, "lnk: agent %s runs on %s, as its config.json says\n", agent, c.Model)
	case c.From == modelFromDefault:
		fmt.Fprintf(w, "lnk: agent %s runs on %s (%s is set)\n", agent, c.Model, c.Env)
	}
	if c.NoKey != "" {
		fmt.Fprintf(w, "lnk: agent %s is to run on %s (%s), but no provider here serves it: %s. Until then the offline model answers, saying the same.\n", agent, c.Model, c.why(), c.NoKey)
	}
}
