package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

func init() {
	register(command{
		words:   "store serve",
		summary: "run a conversations driver behind the agent's store bridge",
		run:     runStoreServe,
	})
}

const storeServeUsage = `store serve --driver NAME --key-file FILE (--socket PATH | --listen 127.0.0.1:PORT)
        [--home DIR] [--agent NAME] [--gcs-bucket B] [--gcs-endpoint URL] [--gcs-prefix P]

Runs the driver NAME (log, compact, sqlite, gcs) on the agent's conversations,
outside Link Harness's process, and answers its calls (append, read, latest,
lease, release) over HTTP on a unix socket or a loopback port, each call proved
with the agent's key (store/bridge). Whatever the driver needs to reach its
store stays here. Once listening it prints one line,
  serving DRIVER conversations of AGENT on unix:PATH (or tcp:127.0.0.1:PORT)
and serves until interrupted. --listen 127.0.0.1:0 takes a free port.`

func runStoreServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		cf                             chatFlags
		driver, keyFile, socket, laddr string
	)
	fs := chatFlagSet("store serve", storeServeUsage, stderr)
	cf.register(fs)
	fs.StringVar(&driver, "driver", "", "the driver that keeps the conversations: log, compact, sqlite or gcs")
	fs.StringVar(&keyFile, "key-file", "", "a file holding the agent's key, which proves each call")
	fs.StringVar(&socket, "socket", "", "the unix socket to answer on, made for this user alone")
	fs.StringVar(&laddr, "listen", "", "the loopback address to answer on instead: 127.0.0.1:PORT")
	words, err := chatParseFlags(fs, args)
	if err != nil {
		return chatUsageStatus(err)
	}
	if len(words) > 0 || driver == "" || keyFile == "" || (socket == "") == (laddr == "") {
		fmt.Fprintln(stderr, "lnk store serve: say --driver, --key-file, and one of --socket and --listen")
		fs.Usage()
		return 2
	}
	return chatExit(stderr, "store serve", storeServe(ctx, cf, driver, keyFile, socket, laddr, stdout, stderr))
}

func storeServe(ctx context.Context, cf chatFlags, driver, keyFile, socket, laddr string, stdout, stderr io.Writer) error {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("read the key: %w", err)
	}
	key, err := contract.ParseKey(b)
	if err != nil {
		return fmt.Errorf("read the key of %s: %w", keyFile, err)
	}
	p, err := cf.paths()
	if err != nil {
		return err
	}
	openers, closeOpeners := cf.openers(p)
	defer closeOpeners()
	open, ok := openers[driver]
	if !ok {
		var names []string
		for name := range openers {
			names = append(names, name)
		}
		sort.Strings(names)
		if driver == gcsName {
			return errors.New("the gcs driver needs --gcs-bucket")
		}
		return fmt.Errorf("no driver %q: one of %s", driver, strings.Join(names, ", "))
	}
	d, err := open(p.Chats())
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
	fmt.Fprintf(stdout, "serving %s conversations of %s on %s:%s\n", driver, p.Agent, network, ln.Addr())
	return srv.Serve(ctx, ln)
}
