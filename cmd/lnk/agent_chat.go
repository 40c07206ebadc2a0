package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/cmd/internal/environ"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/fork"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/transcript"
)

// The conversation commands that work on an agent's store directly: show,
// convert and fork. lnk agent chat itself, and send, talk to the harness.

// chatFlags are the flags every conversation command takes.
type chatFlags struct {
	home, agent string
	// settings are what the drivers' plugins are told, by environment
	// variable: each driver's settings are flags (--gcs-bucket...).
	settings map[string]*string
}

func (c *chatFlags) register(fs *pflag.FlagSet) {
	c.registerAgent(fs)
	c.settings = registerSettings(fs)
}

// registerSettings registers a flag for each setting of Link's drivers'
// plugins (--gcs-bucket...), by the environment variable each stands
// for.
func registerSettings(fs *pflag.FlagSet) map[string]*string {
	settings := map[string]*string{}
	for _, d := range drivers.Link {
		for _, s := range d.Settings {
			settings[s.Env] = fs.String(s.Flag, "", s.Usage+" (default $"+s.Env+")")
			groupFlags(fs, "Drivers' settings", s.Flag)
		}
	}
	return settings
}

// withSettings is env with the settings the flags said over its own.
func withSettings(env map[string]string, settings map[string]*string) map[string]string {
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	for k, v := range settings {
		if *v != "" {
			env[k] = *v
		}
	}
	return env
}

// registerAgent registers --home and --agent alone: a command that
// reaches no conversation takes no driver's settings.
func (c *chatFlags) registerAgent(fs *pflag.FlagSet) {
	fs.StringVar(&c.home, "home", "", "the Link home `folder` (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&c.agent, "agent", "", "the agent's `name` (default $"+contract.EnvAgent+", else main)")
	groupFlags(fs, "The agent", "home", "agent")
}

// paths names the agent's files, from the flags, else the environment.
func (c *chatFlags) paths() (store.Paths, error) {
	return drivers.AgentPaths(firstOf(c.home, os.Getenv("LNK_HOME")), firstOf(c.agent, os.Getenv(contract.EnvAgent)))
}

// drivers are the agent's drivers as lnk's commands reach them: the log
// and compact here, every other in its plugin, told what the flags say
// over the process's environment.
func (c *chatFlags) drivers() drivers.Set { return c.driversWith(environ.Map()) }

// driversWith is drivers over the environment env.
func (c *chatFlags) driversWith(env map[string]string) drivers.Set {
	return drivers.Set{Env: withSettings(env, c.settings)}
}

// router opens every driver on p's conversations, and a router among
// them that begins a new conversation kind's way. closeAll closes them.
func (c *chatFlags) router(p store.Paths, kind string) (r *router.Router, closeAll func(), err error) {
	return c.routerWith(environ.Map(), p, kind)
}

// routerWith is router over the environment env.
func (c *chatFlags) routerWith(env map[string]string, p store.Paths, kind string) (r *router.Router, closeAll func(), err error) {
	ds, err := c.driversWith(env).Open(p)
	if err != nil {
		return nil, nil, err
	}
	closeAll = func() { closeDrivers(ds) }
	r, err = router.New(p, kind, ds)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return r, closeAll, nil
}

// closeDrivers closes each driver that holds something (a plugin).
func closeDrivers(ds map[string]store.Conversations) {
	for _, d := range ds {
		if c, ok := d.(store.Closer); ok {
			c.Close()
		}
	}
}

func (m *Main) chatShowCmd() *cobra.Command {
	var cf chatFlags
	c := &cobra.Command{
		Use:   "show THREAD",
		Short: "print a conversation's copy for people, from its events",
		Long: `Prints what was said in the conversation THREAD (telegram:42, link:notes, default),
up to the agent's last answer, from its events, however they are kept: the owner's
messages and people's, and the agent's answers, never a tool's call or answer.`,
		Example: `  lnk agent chat show link:chat
  lnk agent chat show --agent research telegram:42`,
		Args: words(1, "name one THREAD"),
		RunE: func(c *cobra.Command, words []string) error {
			return chatShow(c.Context(), cf, words[0], m.Stdout)
		},
	}
	cf.register(c.Flags())
	return c
}

func chatShow(ctx context.Context, cf chatFlags, thread string, stdout io.Writer) error {
	if err := contract.CheckThread(thread); err != nil {
		return err
	}
	p, err := cf.paths()
	if err != nil {
		return err
	}
	r, closeAll, err := cf.router(p, log.Name)
	if err != nil {
		return err
	}
	defer closeAll()
	events, err := r.Read(ctx, thread, 1)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		return fmt.Errorf("%s of %s has no conversation", thread, p.Agent)
	}
	_, err = stdout.Write(transcript.Render(events))
	return err
}

func (m *Main) chatConvertCmd() *cobra.Command {
	var cf chatFlags
	var to string
	names := drivers.Names()
	c := &cobra.Command{
		Use:   "convert --to " + strings.Join(names, "|"),
		Short: "move every conversation to another store driver",
		Long: `Moves every conversation of the agent that another driver keeps to the driver --to names,
each written beside its own and put in its place in one rename, with its tools and
the answers it still has to hand over. Stop the agent first: a conversation whose
turn runs refuses it. The spec's [storage] conversations says only how a new one
begins; this moves the old ones.

What each costs a turn: log, sqlite and gcs read a turn's window alone, the same
at any length (BenchmarkTurnWindow: 100,000 events within 1.3 times 100). compact
keeps a conversation compressed, about a third of the log's bytes, with no index
of its frames: each turn reads and decompresses all of it, about 3 ms a thousand
events on two cores (308 ms a turn at 100,000 against 0.14 ms for the log). Keep a
conversation compact when its bytes matter more than its turns' time; lnk agent
status names each compact conversation past 10,000 events.`,
		Example: `  lnk agent chat convert --to compact
  lnk agent chat convert --to gcs --gcs-bucket my-chats`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			if to == "" {
				return badUsage("say --to, one of %s", strings.Join(names, ", "))
			}
			return chatConvert(c.Context(), cf, to, m.Stdout, m.Stderr)
		},
	}
	cf.register(c.Flags())
	c.Flags().StringVar(&to, "to", "", "the `driver` to keep them: "+strings.Join(names, ", "))
	c.RegisterFlagCompletionFunc("to", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func chatConvert(ctx context.Context, cf chatFlags, to string, stdout, stderr io.Writer) error {
	p, err := cf.paths()
	if err != nil {
		return err
	}
	openers := cf.drivers().Openers(p)
	if openers[to] == nil {
		return fmt.Errorf("no way %q: one of %s", to, strings.Join(drivers.Names(), ", "))
	}
	bar := &chatProgressBar{w: stderr}
	res, err := convert.Agent(ctx, p, to, openers, bar.show)
	bar.end()
	for _, th := range res.Unforgotten {
		fmt.Fprintf(stderr, "lnk agent chat convert: the old way still keeps %s's events: its driver can't forget them\n", th)
	}
	for _, th := range res.Links {
		fmt.Fprintf(stderr, "lnk agent chat convert: %s not converted: its conversation folder (%s) is a symbolic link, refused: never followed\n", th, linkedFolder(th))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d conversations of %s converted to %s", len(res.Converted), p.Agent, to)
	if n := len(res.Links); n > 0 {
		fmt.Fprintf(stdout, "; %d refused: a symbolic link", n)
	}
	fmt.Fprintln(stdout)
	return nil
}

// linkedFolder is the conversation folder of thread, as the agent's home
// names it (chats/<folder>): no machine path outside the home is told.
func linkedFolder(thread string) string {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "chats"
	}
	return path.Join("chats", name)
}

// chatProgressBar draws how many of how many are done on one line of a
// terminal: [#####.....] 12/40.
type chatProgressBar struct {
	w     io.Writer
	drawn bool
}

const chatProgressWidth = 30

func (b *chatProgressBar) show(done, total int) {
	if total == 0 {
		return
	}
	n := done * chatProgressWidth / total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat(".", chatProgressWidth-n), done, total)
	b.drawn = true
}

func (b *chatProgressBar) end() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

func (m *Main) chatForkCmd() *cobra.Command {
	var cf chatFlags
	var before int64
	var as string
	c := &cobra.Command{
		Use:   "fork THREAD --before SEQ",
		Short: "begin a conversation with one's events before a message",
		Long: `Begins NEWTHREAD with every event of THREAD before #SEQ, a message of the owner's
(lnk agent chat show gives each its number), as they are, and the tools THREAD
was narrowed to, so the fork's prompt is the same up to there. Without --as, the
new thread is link:fork-<SEQ>-<thread>.`,
		Example: `  lnk agent chat fork link:chat --before 9
  lnk agent chat fork telegram:42 --before 9 --as link:edit`,
		Args: words(1, "name one THREAD"),
		RunE: func(c *cobra.Command, words []string) error {
			if before < 1 {
				return badUsage("say --before SEQ, the owner's message the fork begins before")
			}
			return chatFork(c.Context(), cf, words[0], before, as, m.Stdout)
		},
	}
	cf.register(c.Flags())
	c.Flags().Int64Var(&before, "before", 0, "the owner's message the fork begins before (required)")
	c.Flags().StringVar(&as, "as", "", "the new `thread` (default link:fork-<SEQ>-<thread>)")
	return c
}

func chatFork(ctx context.Context, cf chatFlags, thread string, before int64, as string, stdout io.Writer) error {
	if err := contract.CheckThread(thread); err != nil {
		return err
	}
	p, err := cf.paths()
	if err != nil {
		return err
	}
	dir, err := p.Conversation(thread)
	if err != nil {
		return err
	}
	// The fork is kept as its source is.
	kind, err := driver.Of(dir)
	if err != nil {
		return err
	}
	if kind == "" {
		return fmt.Errorf("%s of %s has no conversation", thread, p.Agent)
	}
	ds, err := cf.driversWith(environ.Map()).Open(p)
	if err != nil {
		return err
	}
	defer closeDrivers(ds)
	r, err := router.New(p, kind, ds)
	if err != nil {
		return err
	}
	// The driver that keeps the source, and the fork, may keep the tools
	// it was narrowed to (gcs, in the bucket): they go with it.
	keeper, _ := ds[kind].(store.ToolsKeeper)
	if as == "" {
		if as, err = chatForkName(ctx, r, thread, before); err != nil {
			return err
		}
	}
	if err := fork.Thread(ctx, p, r, keeper, thread, as, before); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", as)
	return nil
}

// chatForkName is a new link: thread for a fork of thread before seq: the
// first of link:fork-<seq>-<thread>, -2, -3... that has no events.
func chatForkName(ctx context.Context, r *router.Router, thread string, seq int64) (string, error) {
	base := "fork-" + strconv.FormatInt(seq, 10) + "-" + strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			return c
		case c >= 'A' && c <= 'Z':
			return c + 'a' - 'A'
		}
		return '-'
	}, thread)
	for i := 1; i < 100; i++ {
		name := base
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		if len(name) > 64 {
			cut := base[:64-len(name)+len(base)]
			name = strings.TrimRight(cut, ".-_") + name[len(base):]
		}
		th := "link:" + name
		if contract.CheckThread(th) != nil {
			continue
		}
		next, err := store.Next(ctx, r, th)
		if err != nil {
			return "", err
		}
		if next == 1 {
			return th, nil
		}
	}
	return "", fmt.Errorf("no free name for a fork of %s: say --as", thread)
}
