package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/cmd/internal/environ"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The conversation commands that work on an agent's store directly: show,
// convert and fork. lnk agent chat itself, and send, talk to the harness.
func init() {
	register(command{words: "agent chat show", summary: "print a conversation's copy for people, from its events", run: runChatShow})
	register(command{words: "agent chat convert", summary: "move every conversation to another way of keeping them", run: runChatConvert})
	register(command{words: "agent chat fork", summary: "begin a conversation with one's events before a message", run: runChatFork})
}

// chatFlags are the flags every conversation command takes.
type chatFlags struct {
	home, agent string
	// settings are what the drivers' plugins are told, by environment
	// variable: each driver's settings are flags (--gcs-bucket...).
	settings map[string]*string
}

func (c *chatFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.home, "home", "", "the Link home folder (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&c.agent, "agent", "", "the agent (default $"+contract.EnvAgent+", else main)")
	c.settings = map[string]*string{}
	for _, d := range drivers.Link {
		for _, s := range d.Settings {
			c.settings[s.Env] = fs.String(s.Flag, "", s.Usage+" (default $"+s.Env+")")
		}
	}
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
	env = maps.Clone(env)
	for k, v := range c.settings {
		if *v != "" {
			env[k] = *v
		}
	}
	return drivers.Set{Env: env}
}

// router opens every driver on p's conversations, and a router among
// them that begins a new conversation kind's way. closeAll closes them.
func (c *chatFlags) router(p store.Paths, kind string) (r *store.Router, closeAll func(), err error) {
	return c.routerWith(environ.Map(), p, kind)
}

// routerWith is router over the environment env.
func (c *chatFlags) routerWith(env map[string]string, p store.Paths, kind string) (r *store.Router, closeAll func(), err error) {
	ds, err := c.driversWith(env).Open(p)
	if err != nil {
		return nil, nil, err
	}
	closeAll = func() { closeDrivers(ds) }
	r, err = store.NewRouter(p, kind, ds)
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

// chatParseFlags parses args with fs, flags and words in any order, and
// returns the words. It prints fs's usage for --help and says so with
// flag.ErrHelp.
func chatParseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		if args[0] == "--" {
			return append(words, args[1:]...), nil
		}
		words = append(words, args[0])
		args = args[1:]
	}
}

func chatFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: lnk %s\n\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// chatExit maps a command's error to its status, saying it on stderr.
func chatExit(stderr io.Writer, what string, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "lnk %s: %v\n", what, err)
	return 1
}

func runChatShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cf chatFlags
	fs := chatFlagSet("agent chat show", "agent chat show THREAD [--home DIR] [--agent NAME]\n\n"+
		"Prints what was said in the conversation THREAD (telegram:42, link:notes, default),\n"+
		"up to the agent's last answer, from its events, however they are kept: the owner's\n"+
		"messages and people's, and the agent's answers, never a tool's call or answer.", stderr)
	cf.register(fs)
	words, err := chatParseFlags(fs, args)
	if err != nil {
		return chatUsageStatus(err)
	}
	if len(words) != 1 {
		fs.Usage()
		return 2
	}
	return chatExit(stderr, "agent chat show", chatShow(ctx, cf, words[0], stdout))
}

func chatShow(ctx context.Context, cf chatFlags, thread string, stdout io.Writer) error {
	if err := contract.CheckThread(thread); err != nil {
		return err
	}
	p, err := cf.paths()
	if err != nil {
		return err
	}
	r, closeAll, err := cf.router(p, store.Log)
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
	_, err = stdout.Write(store.RenderCopy(events))
	return err
}

func runChatConvert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cf chatFlags
	ways := drivers.Names()
	fs := chatFlagSet("agent chat convert", "agent chat convert --to "+strings.Join(ways, "|")+" [--home DIR] [--agent NAME] [--gcs-bucket B]\n\n"+
		"Moves every conversation of the agent that isn't kept the way --to says to that way,\n"+
		"each written beside its own and put in its place in one rename, with its tools and\n"+
		"the answers it still has to hand over. Stop the agent first: a conversation whose\n"+
		"turn runs refuses it. The spec's [storage] conversations says only how a new one\n"+
		"begins; this moves the old ones.", stderr)
	cf.register(fs)
	to := fs.String("to", "", "the way to keep them: "+strings.Join(ways, ", "))
	words, err := chatParseFlags(fs, args)
	if err != nil {
		return chatUsageStatus(err)
	}
	if len(words) != 0 || *to == "" {
		fs.Usage()
		return 2
	}
	return chatExit(stderr, "agent chat convert", chatConvert(ctx, cf, *to, stdout, stderr))
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
	res, err := store.Convert(ctx, p, to, openers, bar.show)
	bar.end()
	for _, th := range res.Unforgotten {
		fmt.Fprintf(stderr, "lnk agent chat convert: the old way still keeps %s's events: its driver can't forget them\n", th)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d conversations of %s converted to %s\n", len(res.Converted), p.Agent, to)
	return nil
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

func runChatFork(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cf chatFlags
	fs := chatFlagSet("agent chat fork", "agent chat fork THREAD --before SEQ [--as NEWTHREAD] [--home DIR] [--agent NAME]\n\n"+
		"Begins NEWTHREAD with every event of THREAD before #SEQ, a message of the owner's\n"+
		"(lnk agent chat show gives each its number), as they are, and the tools THREAD\n"+
		"was narrowed to, so the fork's prompt is the same up to there. Without --as, the\n"+
		"new thread is link:fork-<SEQ>-<thread>.", stderr)
	cf.register(fs)
	before := fs.Int64("before", 0, "the owner's message the fork begins before (required)")
	as := fs.String("as", "", "the new thread (default link:fork-<SEQ>-<thread>)")
	words, err := chatParseFlags(fs, args)
	if err != nil {
		return chatUsageStatus(err)
	}
	if len(words) != 1 || *before < 1 {
		fs.Usage()
		return 2
	}
	return chatExit(stderr, "agent chat fork", chatFork(ctx, cf, words[0], *before, *as, stdout))
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
	kind, err := store.KindOf(dir)
	if err != nil {
		return err
	}
	if kind == "" {
		return fmt.Errorf("%s of %s has no conversation", thread, p.Agent)
	}
	r, closeAll, err := cf.router(p, kind)
	if err != nil {
		return err
	}
	defer closeAll()
	if as == "" {
		if as, err = chatForkName(ctx, r, thread, before); err != nil {
			return err
		}
	}
	if err := store.Fork(ctx, p, r, thread, as, before); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", as)
	return nil
}

// chatForkName is a new link: thread for a fork of thread before seq: the
// first of link:fork-<seq>-<thread>, -2, -3... that has no events.
func chatForkName(ctx context.Context, r *store.Router, thread string, seq int64) (string, error) {
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

// chatUsageStatus is the status of flags that didn't parse: 0 for --help,
// which printed the usage, else 2.
func chatUsageStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
