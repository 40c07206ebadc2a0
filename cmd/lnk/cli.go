package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command tree: each command's file has a method of Main that makes
// its cobra.Command, and root puts them together. Help is Go's style
// ("usage: lnk agent chat [flags]" first), its flags in groups.

// Groups of lnk's commands, as its help lists them.
const (
	groupAgents = "agents"
	groupModels = "models"
	groupCheck  = "check"
	groupMore   = "more"
)

// root is lnk's command tree, its commands run by m.
func (m *Main) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "lnk",
		Short: "Link from a terminal: chat with an agent, see how it runs, check and measure Link",
		Long: `lnk is how a person uses and inspects Link from a terminal: chat with an
agent (started here on its home when none runs), see where it runs and on
what, serve its memory, and check an endpoint against the contract.`,
		Example: `  lnk agent chat                     chat with agent main, started here when none runs
  lnk agent chat send "hello"        send one message, print its answer
  lnk agent status                   where the agent runs, on which model, with which tools
  lnk help agent chat                all of a command's flags
  source <(lnk completion bash)      complete lnk's commands and flags in bash`,
		Version:       buildVersion().Version,
		Args:          noWords,
		RunE:          showHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		Annotations:   map[string]string{onlyHolds: "yes"},
	}
	root.AddGroup(
		&cobra.Group{ID: groupAgents, Title: "Agents:"},
		&cobra.Group{ID: groupModels, Title: "Models:"},
		&cobra.Group{ID: groupCheck, Title: "Checking Link:"},
		&cobra.Group{ID: groupMore, Title: "More:"},
	)
	root.SetHelpCommandGroupID(groupMore)
	root.SetCompletionCommandGroupID(groupMore)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	root.SetUsageFunc(func(c *cobra.Command) error { writeUsage(c.OutOrStderr(), c); return nil })
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{flagError(err)} })
	root.SetVersionTemplate(versionLine() + "\n")

	agent := parent("agent", "an agent: chat with it, see how it runs", groupAgents)
	agent.AddCommand(m.chatCmd(), m.statusCmd(), m.keyCmd(), m.configureCmd())
	model := parent("model", "what Link knows of a model", groupModels)
	model.AddCommand(m.modelShowCmd())
	memory := parent("memory", "Link Memory, an agent's notes, search, files and skills", groupAgents)
	memory.AddCommand(m.memoryServeCmd())
	runTool := parent("run", "the agent's run tool: commands in its workspace, each in a kernel sandbox", groupAgents)
	runTool.AddCommand(m.runServeCmd())
	fileCmd := parent("file", "the agent's file tool: its workspace's files read, written and searched", groupAgents)
	fileCmd.AddCommand(m.fileServeCmd())
	root.AddCommand(agent, memory, runTool, fileCmd, model, m.conformanceCmd(), m.measureCmd(), m.versionCmd())
	sched := parent("scheduler", "an agent's scheduler: its reminders, subagents and teammates", groupAgents)
	sched.AddCommand(m.schedulerServeCmd())
	root.AddCommand(agent, memory, runTool, sched, model, m.conformanceCmd(), m.measureCmd(), m.versionCmd())
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	// cobra's completion command, made now (its scripts go to the output
	// set when it is made) so that a shell it doesn't
	// know is refused, not answered with its help.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Short = "a script that completes lnk's commands and flags in bash, zsh, fish or powershell"
			c.Args, c.RunE = noWords, showHelp
			c.Annotations = map[string]string{onlyHolds: "yes"}
		}
	}
	return root
}

// onlyHolds is the annotation of a command that only holds others.
const onlyHolds = "lnk-only-holds"

// parent is a command that only holds others: alone it shows its help.
func parent(name, short, group string) *cobra.Command {
	return &cobra.Command{Use: name, Short: short, GroupID: group, Args: noWords, RunE: showHelp,
		Annotations: map[string]string{onlyHolds: "yes"}}
}

func showHelp(c *cobra.Command, _ []string) error { return c.Help() }

// noWords refuses words after a command that takes none, as an unknown
// command when it has commands of its own.
func noWords(c *cobra.Command, words []string) error {
	if len(words) == 0 {
		return nil
	}
	if c.HasAvailableSubCommands() {
		return badUsage("unknown command %q", words[0])
	}
	return badUsage("it takes no words, not %q", words)
}

// isCobraUsage says err is cobra's own refusal of a command line.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "invalid argument") || strings.HasPrefix(s, "unknown flag") || strings.HasPrefix(s, "required flag")
}

// flagError is pflag's refusal of a flag in the words Go's flag package
// uses, which people who run Go programs know.
func flagError(err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		name := ne.GetSpecifiedName()
		if len(name) == 1 {
			return fmt.Errorf("flag provided but not defined: -%s", name)
		}
		return fmt.Errorf("flag provided but not defined: --%s", name)
	}
	return err
}

// longFlags spells every -name in args that names a long flag of lnk's
// as --name, so Go's single-dash spelling (-agent main) still works.
// Words after -- are left as they are.
func longFlags(root *cobra.Command, args []string) []string {
	names := map[string]bool{"help": true, "version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && names[name] {
			out[i] = "-" + a
		}
	}
	return out
}

// flagGroup is the annotation naming the group a flag is listed in.
const flagGroup = "lnk-group"

// groupFlags lists the flags named under title in their command's help.
func groupFlags(fs *pflag.FlagSet, title string, names ...string) {
	for _, n := range names {
		if fs.Lookup(n) == nil {
			panic("lnk: no flag " + n + " to group")
		}
		fs.SetAnnotation(n, flagGroup, []string{title})
	}
}

// writeHelp writes c's help: its usage line, what it does, its commands,
// examples and flags.
func writeHelp(w io.Writer, c *cobra.Command) {
	writeUsageLines(w, c)
	if text := strings.TrimSpace(firstOf(c.Long, c.Short)); text != "" {
		fmt.Fprintf(w, "\n%s\n", text)
	}
	writeCommands(w, c)
	if c.HasExample() {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	writeFlags(w, c)
	writeFooter(w, c)
}

// writeUsage writes c's usage, said after a command line it refused.
func writeUsage(w io.Writer, c *cobra.Command) {
	writeUsageLines(w, c)
	writeCommands(w, c)
	writeFlags(w, c)
	writeFooter(w, c)
}

func writeUsageLines(w io.Writer, c *cobra.Command) {
	var lines []string
	if c.Annotations[onlyHolds] == "" {
		lines = append(lines, c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		lines = append(lines, c.CommandPath()+" COMMAND [flags]")
	}
	fmt.Fprintf(w, "usage: %s\n", strings.Join(lines, "\n       "))
}

func writeCommands(w io.Writer, c *cobra.Command) {
	if !c.HasAvailableSubCommands() {
		return
	}
	list := func(title, group string) {
		var lines []string
		for _, s := range c.Commands() {
			if s.GroupID == group && (s.IsAvailableCommand() || s.Name() == "help") {
				lines = append(lines, fmt.Sprintf("  %-*s  %s", s.NamePadding(), s.Name(), s.Short))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\n%s\n%s\n", title, strings.Join(lines, "\n"))
		}
	}
	for _, g := range c.Groups() {
		list(g.Title, g.ID)
	}
	title := "Commands:"
	if len(c.Groups()) > 0 {
		title = "Other commands:"
	}
	list(title, "")
}

// writeFlags writes c's flags, those of a group under its title, in the
// order the groups' first flags were made, then the rest under Flags.
func writeFlags(w io.Writer, c *cobra.Command) {
	var titles []string
	sets := map[string]*pflag.FlagSet{}
	add := func(title string, f *pflag.Flag) {
		fs := sets[title]
		if fs == nil {
			fs = pflag.NewFlagSet(title, pflag.ContinueOnError)
			fs.SortFlags = false
			sets[title] = fs
			titles = append(titles, title)
		}
		fs.AddFlag(f)
	}
	local := c.LocalFlags()
	local.SortFlags = false
	local.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		title := "Flags:"
		if g := f.Annotations[flagGroup]; len(g) > 0 {
			title = g[0] + ":"
		}
		add(title, f)
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			add("Global flags:", f)
		}
	})
	// Flags last among the groups, then the global ones.
	order := make([]string, 0, len(titles))
	for _, t := range titles {
		if t != "Flags:" && t != "Global flags:" {
			order = append(order, t)
		}
	}
	for _, t := range []string{"Flags:", "Global flags:"} {
		if sets[t] != nil {
			order = append(order, t)
		}
	}
	for _, t := range order {
		fmt.Fprintf(w, "\n%s\n%s", t, sets[t].FlagUsages())
	}
}

func writeFooter(w io.Writer, c *cobra.Command) {
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nRun \"%s\" for more about a command.\n", strings.Join(append([]string{"lnk", "help"}, append(strings.Fields(c.CommandPath())[1:], "COMMAND")...), " "))
	}
}

// words is an Args that takes n words, saying what is missing otherwise.
func words(n int, missing string) cobra.PositionalArgs {
	return func(_ *cobra.Command, words []string) error {
		switch {
		case len(words) == 0:
			return badUsage("%s", missing)
		case len(words) != n:
			return badUsage("%s, not %q", missing, words)
		}
		return nil
	}
}
