package harness

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/facts"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/home"
)

// Settings are the agent's settings a turn reads, read afresh at each
// turn. Only cmd knows the file they come from (config.json).
type Settings struct {
	// Model is the model a conversation runs on until a message sets
	// another; as OpenRouter names it, or an alias.
	Model string
	// Aliases are the spec's [model.aliases]: a short name to a model's.
	Aliases map[string]string
	// Fallbacks are the models a round goes to, in order, when the
	// conversation's fails past its retries ([model] fallbacks): names
	// or aliases, each sent its own instructions in the first's place.
	Fallbacks []string
	// Conversations is how a new conversation is kept ([storage]
	// conversations): log, compact or a driver's name; "" is log.
	Conversations string
	// Verbose, when not nil, is the _meta.link.activity of each tool call
	// streamed (/chat:verbose): shown or not.
	Verbose *bool
	// MaxTokens bounds each answer; 0 leaves it to the provider.
	MaxTokens int
	// ToolsSpec is the spec's [tools] table, every tool's, as a JSON
	// object; ToolSpecs, by tool name (web), each tool's [tool.<name>]
	// over it, merged key by key. What a call carries as link.local/spec
	// (ToolSpec).
	ToolsSpec json.RawMessage
	ToolSpecs map[string]json.RawMessage
	// Instructions are the spec's [instructions]: each section of the
	// prompt's source and most, by name (prompt.Settings).
	Instructions prompt.Settings
	// Connections are the connections the agent is reached through, as
	// the spec's [connections] names them, for the prompt's environment.
	Connections []string
	// Window is the spec's [window] table: how much of a conversation the
	// model sees, and when what leaves is summarized.
	Window window.Settings
}

// ToolSpec is tool's table of the spec: its [tool.<name>] over [tools],
// else [tools] alone; nil when the spec has neither.
func (s Settings) ToolSpec(tool string) json.RawMessage {
	if t, ok := s.ToolSpecs[tool]; ok {
		return t
	}
	return s.ToolsSpec
}

// Alias is the model name a name stands for: its alias's, else itself.
func (s Settings) Alias(name string) string {
	if m, ok := s.Aliases[name]; ok && m != "" {
		return m
	}
	return name
}

// Config is a Harness's settings and collaborators: where the home is,
// how conversations are kept, the model and the tools. Home, Drivers,
// Settings and Provider are needed; the rest have defaults.
type Config struct {
	// Home is the Link home: every path of an agent is store.For(Home,
	// agent).
	Home string
	// Drivers opens the ways of keeping conversations for the agent at p
	// (log and compact, and each store driver by its name). It is called
	// once per agent; drivers that are store.Closers are closed by Close.
	Drivers func(p store.Paths) (map[string]store.Conversations, error)
	// Openers, when not nil, opens each way of keeping conversations on
	// any folder, for convert.Resolve, which the harness calls the
	// first time it opens an agent's store.
	Openers func(p store.Paths) map[string]driver.Opener
	// Settings reads the agent's settings, at each turn. A missing file is
	// defaults, not an error.
	Settings func(ctx context.Context, p store.Paths) (Settings, error)
	// Route says which provider serves a model's name; nil is
	// model.Resolve over Env.
	Route func(name string) (model.Route, error)
	// Serves says whether a provider serves a model's name: nil when
	// one does, else why not. A /model:set or _meta.link.model naming a
	// model it refuses is refused before anything is stored. nil leaves
	// that to Route's error alone; a Route that gives every name a route
	// (lnk-link-harness's, whose offline model says which key to set)
	// needs it.
	Serves func(name string) error
	// Env is the environment Route reads when it is nil.
	Env map[string]string
	// Provider gives the provider of a route, for each model call.
	Provider func(model.Route) (model.Provider, error)
	// Inputs are what models take beside text, over Link's table, keyed
	// by a model's name or its maker (model.Takes).
	Inputs map[string]model.Inputs
	// Tools reaches the agent's tools; nil offers none.
	Tools Tools
	// Facts says what is known of each model (its window, its longest
	// answer); nil is Link's file alone.
	Facts ModelFacts
	// Files reads the agent's own files (its instructions, notes, skills
	// and files folder), which the prompt is composed of; nil is
	// store/home's Files of Home.
	Files store.Files

	// Now is the clock; nil is time.Now. Location is the machine's zone,
	// which a message's header gives its time in; nil is time.Local.
	Now      func() time.Time
	Location *time.Location
	// AfterFunc runs f in a goroutine of its own once d has passed, as
	// time.AfterFunc does, unless the stop it returns is called first
	// (stop says whether it stopped it); nil is time.AfterFunc. The lease's
	// renewal and the idle release are timed by it, so a test fires them.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Logger gets what goes wrong outside a turn's answer; nil logs
	// nothing.
	Logger *slog.Logger

	// MaxRounds is how many rounds of tool calls a turn makes before
	// the model is asked once more and told to call nothing; 0 is 8.
	MaxRounds int
	// MaxAnswer bounds the bytes of answer a turn streams (a bridge reads
	// one up to 16 MiB); 0 is DefaultMaxAnswer.
	MaxAnswer int
	// LeaseTTL is how long a turn's lease lasts unrenewed; 0 is 30 s. It
	// is renewed every third of it while the turn runs.
	LeaseTTL time.Duration
	// SweepEvery is how often Start looks for turns a crash left
	// unfinished; 0 is a minute.
	SweepEvery time.Duration
	// StateWait is how long an export or import of agent state waits
	// for a conversation's running turn to end before it is refused; 0
	// is DefaultStateWait.
	StateWait time.Duration
	// KeepEvents bounds, in bytes as estimated, the events kept between
	// turns of the conversations that had one lately (each kept for a
	// sweep's time), so a turn reads only what came after them; 0 is
	// DefaultKeepEvents, negative keeps none.
	KeepEvents int
	// IdleFree is how long the harness waits with no turn or task running
	// before it gives its free memory back to the system; 0 is
	// DefaultIdleFree, negative never.
	IdleFree time.Duration
	// OnCall, when not nil, is told of each call of the model before it
	// is made: the agent, the thread and the request. For tests and
	// measures; it must not change the request.
	OnCall func(agent, thread string, req model.Request)
}

// Defaults.
const (
	DefaultMaxRounds  = 8
	DefaultMaxAnswer  = 16 << 20
	DefaultLeaseTTL   = 30 * time.Second
	DefaultSweepEvery = time.Minute
	DefaultStateWait  = 2 * time.Minute
)

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	switch {
	case c.Home == "":
		return errors.New("harness config: no home")
	case c.Drivers == nil:
		return errors.New("harness config: no drivers")
	case c.Settings == nil:
		return errors.New("harness config: no settings reader")
	case c.Provider == nil:
		return errors.New("harness config: no provider")
	}
	if c.Route == nil {
		env := c.Env
		c.Route = func(name string) (model.Route, error) { return model.Resolve(name, env) }
	}
	if c.Tools == nil {
		c.Tools = NoTools{}
	}
	if c.Facts == nil {
		c.Facts = &facts.Resolver{Link: facts.Link()}
	}
	if c.Files == nil {
		c.Files = home.Files{Home: c.Home}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Location == nil {
		c.Location = time.Local
	}
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxRounds <= 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.MaxAnswer <= 0 {
		c.MaxAnswer = DefaultMaxAnswer
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	if c.StateWait <= 0 {
		c.StateWait = DefaultStateWait
	}
	if c.KeepEvents == 0 {
		c.KeepEvents = DefaultKeepEvents
	}
	if c.IdleFree == 0 {
		c.IdleFree = DefaultIdleFree
	}
	return nil
}
