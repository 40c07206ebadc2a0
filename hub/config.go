package hub

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/lnk-dev/link/acp"
)

// Config is a Hub's settings: the harness program it runs, where it
// keeps its files, and its bounds in time and size.
type Config struct {
	// Command runs the harness: its program and arguments.
	Command []string
	// Env is the harness's environment; nil is the hub's own.
	Env []string
	// Dir is the folder the harness runs in and its sessions' cwd; empty
	// is the hub's own.
	Dir string
	// Actions are Link's namespaces' actions (their actions.toml), by
	// which the owner's commands are named to the harness.
	Actions []Action
	// Route runs a Link-owned action's route; nil runs none (such an
	// action is then refused).
	Route RouteFunc
	// Tools are Link's tools, given to each session as its mcpServers.
	Tools []Tool
	// ToolSettings writes Tools into the harness's own settings, for a
	// harness that says it takes no MCP server over HTTP; nil writes
	// none (such a harness then runs without them, /health saying so).
	ToolSettings ToolSettings
	// Sessions is the file keeping each thread's session; empty keeps
	// them in memory alone (a restart of the hub starts every thread anew).
	Sessions string
	// Answers is the file keeping the answers nobody took until
	// _link/recover hands them over; empty keeps them in memory alone (a
	// restart of the hub loses them).
	Answers string
	// Store reads and writes the harness's own session files, for agent
	// state when the harness answers none itself; nil has none (an
	// export then replays what session/load gives, and an import is
	// answered that it takes none).
	Store Store
	// StateWait is how long an export or import waits for the turns
	// running to end before it is refused; 2 minutes when zero.
	StateWait time.Duration
	// StateQuiet is how long after the last turn's end an export or
	// import waits before it reads or writes, for a harness that writes
	// its own files a little after it answers (Claude Code drains its
	// transcript's queue every 100 ms); zero waits none.
	StateQuiet time.Duration

	// CallTimeout bounds each call of the harness but a prompt's turn:
	// initialize, a session's making or taking up, the wait for a
	// session's command list. 30 s when zero.
	CallTimeout time.Duration
	// TurnTimeout bounds a prompt's turn in the harness: past it the
	// harness is sent session/cancel for it, and past CancelGrace more,
	// its whole process group is stopped (every turn running in it
	// failing, the next message starting it again). 30 minutes when zero.
	TurnTimeout time.Duration
	// CancelGrace is how long a turn past TurnTimeout is given to end
	// once cancelled. 30 s when zero.
	CancelGrace time.Duration
	// IdleClose is how long a session may go without a turn before the
	// hub closes it (session/close), where the harness offers close and
	// session/resume or session/load, by which the thread's next message
	// takes it up again. 10 minutes when zero.
	IdleClose time.Duration
	// HealthWait is how long /health waits for a harness still starting.
	// 2 s when zero.
	HealthWait time.Duration
	// Grace is how long the harness's process group is given to end after
	// SIGTERM before SIGKILL. 5 s when zero.
	Grace time.Duration
	// HealthyStretch is how long a harness runs, once it agreed on ACP,
	// before the wait between failed starts begins again at a second.
	// A minute when zero.
	HealthyStretch time.Duration
	// MaxLine bounds a line the harness writes (one message); a longer one
	// fails the turn it was for. acp.MaxMessage when zero.
	MaxLine int

	// Logger gets the harness's standard error (debug) and what it did
	// wrong (warn), Tools' addresses taken out of all of it (an agent may
	// quote its MCP URL, which carries the tool's secret); nil logs
	// nothing.
	Logger *slog.Logger
	// Now is the clock of the waits between starts; nil is time.Now.
	Now func() time.Time
}

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("hub config: no harness command")
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		c.Dir = wd
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	c.Dir = dir
	if c.CallTimeout <= 0 {
		c.CallTimeout = 30 * time.Second
	}
	if c.TurnTimeout <= 0 {
		c.TurnTimeout = 30 * time.Minute
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = 30 * time.Second
	}
	if c.IdleClose <= 0 {
		c.IdleClose = 10 * time.Minute
	}
	if c.HealthWait <= 0 {
		c.HealthWait = 2 * time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 5 * time.Second
	}
	if c.StateWait <= 0 {
		c.StateWait = 2 * time.Minute
	}
	if c.HealthyStretch <= 0 {
		c.HealthyStretch = time.Minute
	}
	if c.MaxLine <= 0 {
		c.MaxLine = acp.MaxMessage
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}
