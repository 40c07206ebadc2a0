package agentspec

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/contract"
)

// Program is a harness's configure command: lnk-link-harness configure
// and lnk-acp configure differ only in where the agent's folder is, how
// config.json is checked, and what else the adapter keeps.
type Program struct {
	// Name is the program's (lnk-link-harness), for its usage and
	// refusals.
	Name string
	// Folder is the agent's folder under the Link home, where its spec
	// and config.json are.
	Folder func(home, agent string) (string, error)
	// Check reads config.json as the harness will, refusing what it
	// would (nil: the spec's keys and types alone are checked).
	Check func(config []byte) error
	// Keep, when not nil, keeps what else the harness's serve needs
	// (lnk-acp: Link's tools), once config.json is written, and says
	// what it kept.
	Keep func(folder string) (string, error)
}

const usage = `usage: %[1]s configure [--home DIR] [--agent NAME] [--spec FILE]

Reads the agent's spec (a TOML file: --spec, else spec.toml in the agent's
folder) and writes it as the agent's config.json, which %[1]s serve reads
at each turn. A key it doesn't know, a value of the wrong type or out of
its bounds is refused, naming its line, and config.json is left as it was.

`

// Run runs the command on args and returns its exit code: 0 written, 1
// refused, 2 a wrong flag.
func (p Program) Run(args []string, env map[string]string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(p.Name+" configure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, usage, p.Name)
		fs.PrintDefaults()
	}
	home := fs.String("home", env["LNK_HOME"], "the Link home folder ($LNK_HOME, else the user's config folder/lnk)")
	agent := fs.String("agent", env[contract.EnvAgent], "the agent ($LNK_AGENT, else main)")
	spec := fs.String("spec", "", "the agent's spec (else "+FileName+" in its folder, <home>/agents/<agent>/)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s configure takes no words: %q\n", p.Name, fs.Args())
		return 2
	}
	if err := p.Configure(*home, *agent, *spec, stdout); err != nil {
		fmt.Fprintf(stderr, "%s configure: %v\n", p.Name, err)
		return 1
	}
	return 0
}

// Configure writes the spec (spec, else spec.toml in the agent's folder)
// as the config.json of agent (main when "") under the Link home home
// (the user's config folder/lnk when ""), then keeps what Keep keeps,
// and says on stdout what it wrote.
func (p Program) Configure(home, agent, spec string, stdout io.Writer) error {
	if agent == "" {
		agent = contract.DefaultAgent
	}
	if err := contract.CheckAgentName(agent); err != nil {
		return err
	}
	if home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("find the Link home: %w (say --home)", err)
		}
		home = filepath.Join(dir, "lnk")
	}
	folder, err := p.Folder(home, agent)
	if err != nil {
		return err
	}
	if spec == "" {
		spec = filepath.Join(folder, FileName)
	}
	config := filepath.Join(folder, "config.json")
	c, err := WriteConfig(spec, config, p.Check)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s from %s\n", config, spec)
	for _, t := range c.Dropped {
		fmt.Fprintf(stdout, "config.json's %q was not in the spec: its reader's defaults hold now\n", t)
	}
	if p.Keep != nil {
		said, err := p.Keep(folder)
		if err != nil {
			return err
		}
		if said != "" {
			fmt.Fprintln(stdout, said)
		}
	}
	return nil
}
