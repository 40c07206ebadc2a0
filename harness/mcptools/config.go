package mcptools

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Config is what a Tools is made of. Env and ToolLists are needed; the rest
// have defaults.
type Config struct {
	// Env is the environment of agent's tools: the variables naming its
	// servers ($LNK_MEMORY, $LNK_TOOL_<NAME>...). It is read at each
	// turn; only cmd knows where it comes from (the process's own, for
	// a process of one agent).
	Env func(agent string) map[string]string
	// ToolLists gives the path of agent's tool-lists.json
	// (store.Paths.ToolLists).
	ToolLists func(agent string) (string, error)
	// HTTPClient carries every session; nil is a client of its own, with
	// no timeout of its own (a call lasts as long as its turn lets it).
	// Either way an answer given as one JSON body is read at most 16 MiB.
	HTTPClient *http.Client
	// KeepSession reports whether a tool's MCP session lasts between turns
	// (shared by all of an agent's conversations) rather than ending with
	// each turn; nil is DefaultKeepSession.
	KeepSession func(tool string) bool

	// StartTimeout bounds a tool's start and listing; 0 is 30 s.
	StartTimeout time.Duration
	// KeepIdle ends a kept session none has used for that long; 0 is
	// 10 minutes. KeepAge ends one that long after it started; 0 is an
	// hour.
	KeepIdle time.Duration
	KeepAge  time.Duration
	// RetryAfter is how long a tool never listed that didn't answer is
	// left out before it is tried again; 0 is a minute.
	RetryAfter time.Duration
	// SweepEvery is how often kept sessions past their limits are ended;
	// 0 is 30 s.
	SweepEvery time.Duration

	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger gets what goes wrong outside a call's answer (a list that
	// can't be kept); nil logs nothing.
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultKeepIdle     = 10 * time.Minute
	DefaultKeepAge      = time.Hour
	DefaultRetryAfter   = time.Minute
	DefaultSweepEvery   = 30 * time.Second
)

// keepSessionTools are the tools whose sessions last between turns: Link's
// own, which keep nothing of one conversation in their session (each call
// says its conversation), and the task and file namespaces over them.
var keepSessionTools = []string{"memory", "run", "file", "code", "scheduler", "task"}

// DefaultKeepSession is the default Config.KeepSession: true for memory,
// run, file, code, the scheduler, the task namespace (task) and a team's
// memory (<team>_memory), all Link's own and the agent's in every
// conversation. A machine whose namespaces are named otherwise sets
// Config.KeepSession. Every other tool may keep what one conversation did
// in its session, so its session ends with its turn.
func DefaultKeepSession(tool string) bool {
	for _, k := range keepSessionTools {
		if tool == k {
			return true
		}
	}
	return strings.HasSuffix(tool, "_memory")
}

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	switch {
	case c.Env == nil:
		return errors.New("tools config: no environment")
	case c.ToolLists == nil:
		return errors.New("tools config: no tool-lists.json path")
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	c.HTTPClient = boundClient(c.HTTPClient)
	if c.KeepSession == nil {
		c.KeepSession = DefaultKeepSession
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.KeepIdle <= 0 {
		c.KeepIdle = DefaultKeepIdle
	}
	if c.KeepAge <= 0 {
		c.KeepAge = DefaultKeepAge
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
