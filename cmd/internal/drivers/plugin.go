package drivers

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// Plugin is the program of a driver's plugin, lnk-<Name>: it serves the
// driver on one agent's conversations behind the store bridge, outside
// Link Harness's process, so whatever the driver needs to reach its store
// stays there (spec: "Behind the store bridge").
type Plugin struct {
	// Name is the driver's, one of Link's.
	Name string
	// Open opens the driver on the agent at p, told its settings by
	// environment variable (Setting.Env).
	Open func(ctx context.Context, p store.Paths, settings map[string]string) (store.Conversations, error)
}

const pluginUsage = `usage: lnk-%[1]s serve --key-file FILE [--socket PATH | --listen 127.0.0.1:PORT]
        [--home DIR] [--agent NAME] [--driver %[1]s] [the driver's flags]

Runs the %[1]s driver on the agent's conversations and answers its calls
(append, read, latest, lease, release, tools, narrow, forget) over HTTP on
a unix socket or a loopback port, each call proved with the agent's key
(store/bridge): the agent's store bridge, run beside it, so whatever the
driver needs to reach its store (the bucket's settings and credentials)
is in this program's environment alone, never the harness's. Without
--socket or --listen it answers on the agent's own socket,
<home>/agents/<agent>/run/store-%[1]s.sock, where Link Harness reaches it;
lnk agent chat starts it there, and a service manager may (docs/agents.md,
"The store bridge"). Link Harness told --store-child, and lnk's commands,
start it as their child instead. Once listening it prints one line,
  serving %[1]s conversations of AGENT on unix:PATH (or tcp:127.0.0.1:PORT)
and serves until interrupted. --listen 127.0.0.1:0 takes a free port. Each
of the driver's flags may come from the environment variable beside it.

`

// Main runs the plugin as its program, with the process's arguments and
// environment, until SIGINT or SIGTERM, and exits with its status.
func (pl Plugin) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := pl.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run is the program: args after its name; it returns the exit status, 2
// for a usage it can't follow.
func (pl Plugin) Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	d, ok := Lookup(pl.Name)
	if !ok {
		fmt.Fprintf(stderr, "lnk-%s: no such driver of Link's\n", pl.Name)
		return 2
	}
	fs := flag.NewFlagSet("lnk-"+pl.Name+" serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, pluginUsage, pl.Name)
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "serve" {
		fs.Usage()
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
			return 0
		}
		return 2
	}
	var home, agent, driver, keyFile, socket, laddr string
	fs.StringVar(&home, "home", getenv("LNK_HOME"), "the Link home folder ($LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&agent, "agent", getenv(contract.EnvAgent), "the agent ($"+contract.EnvAgent+", else main)")
	fs.StringVar(&driver, "driver", pl.Name, "the driver: "+pl.Name+" alone")
	fs.StringVar(&keyFile, "key-file", "", "a file holding the agent's key, which proves each call")
	fs.StringVar(&socket, "socket", "", "the unix socket to answer on, made for this user alone (default the agent's, <home>/agents/<agent>/run/store-"+pl.Name+".sock)")
	fs.StringVar(&laddr, "listen", "", "the loopback address to answer on instead: 127.0.0.1:PORT")
	settings := map[string]*string{}
	for _, s := range d.Settings {
		settings[s.Env] = fs.String(s.Flag, getenv(s.Env), s.Usage+" ($"+s.Env+")")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || keyFile == "" || (socket != "" && laddr != "") {
		fmt.Fprintf(stderr, "lnk-%s serve: say --key-file, and at most one of --socket and --listen\n", pl.Name)
		fs.Usage()
		return 2
	}
	if driver != pl.Name {
		fmt.Fprintf(stderr, "lnk-%s serve: runs the %s driver, not %q\n", pl.Name, pl.Name, driver)
		return 2
	}
	values := map[string]string{}
	for k, v := range settings {
		values[k] = *v
	}
	if err := pl.serve(ctx, home, agent, keyFile, socket, laddr, values, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "lnk-%s serve: %v\n", pl.Name, err)
		return 1
	}
	return 0
}

func (pl Plugin) serve(ctx context.Context, home, agent, keyFile, socket, laddr string, settings map[string]string, stdout, stderr io.Writer) error {
	key, err := contract.ReadKeyFile(keyFile)
	if err != nil {
		return err
	}
	p, err := AgentPaths(home, agent)
	if err != nil {
		return err
	}
	d, err := pl.Open(ctx, p, settings)
	if err != nil {
		return err
	}
	if c, ok := d.(store.Closer); ok {
		defer c.Close()
	}
	network, addr := "unix", socket
	if laddr != "" {
		network, addr = "tcp", laddr
	}
	if addr == "" {
		if addr, err = BridgeSocket(p, pl.Name); err != nil {
			return err
		}
		if err := makeSocketDir(p); err != nil {
			return err
		}
	}
	ln, err := bridge.Listen(network, addr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: d, Key: key, Logger: logger})
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "serving %s conversations of %s on %s:%s\n", pl.Name, p.Agent, network, ln.Addr())
	return srv.Serve(ctx, ln)
}

// AgentPaths names an agent's files: home, else the user's config
// folder/lnk; agent, else main.
func AgentPaths(home, agent string) (store.Paths, error) {
	if home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return store.Paths{}, fmt.Errorf("find the Link home: %w (say --home)", err)
		}
		home = filepath.Join(dir, "lnk")
	}
	if agent == "" {
		agent = contract.DefaultAgent
	}
	return store.For(home, agent)
}
