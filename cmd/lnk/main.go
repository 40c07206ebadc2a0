// Package main is the lnk command, how a person uses and inspects Link
// from a terminal: lnk agent chat, lnk conformance, lnk memory serve,
// lnk measure. The drivers that keep conversations other than as a log
// or compact run in their plugins (lnk-sqlite, lnk-gcs; cmd/internal/drivers).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one of lnk's commands. Run gets the arguments after the
// command's words and returns the process's exit status.
type command struct {
	words   string // "agent chat send"
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is filled by each command's file in its init.
var commands []command

func register(c command) { commands = append(commands, c) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// The longest run of words that names a command wins.
	var best *command
	n := 0
	for i := range commands {
		w := strings.Fields(commands[i].words)
		if len(w) > len(args) || len(w) <= n {
			continue
		}
		if strings.Join(args[:len(w)], " ") == commands[i].words {
			best, n = &commands[i], len(w)
		}
	}
	if best == nil {
		usage(stderr, args)
		if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
			return 0
		}
		return 2
	}
	return best.run(ctx, args[n:], stdout, stderr)
}

func usage(w io.Writer, args []string) {
	prefix := strings.Join(args, " ")
	var lines []string
	for _, c := range commands {
		if prefix == "" || strings.HasPrefix(c.words, prefix) || len(args) > 0 && strings.HasPrefix(args[0], "-") {
			lines = append(lines, fmt.Sprintf("  lnk %-22s %s", c.words, c.summary))
		}
	}
	if len(lines) == 0 {
		for _, c := range commands {
			lines = append(lines, fmt.Sprintf("  lnk %-22s %s", c.words, c.summary))
		}
		fmt.Fprintf(w, "lnk: unknown command %q\n", prefix)
	}
	sort.Strings(lines)
	fmt.Fprintln(w, "usage:")
	fmt.Fprintln(w, strings.Join(lines, "\n"))
	fmt.Fprintln(w, "Each command takes --help.")
}

// newFlags is a command's flag set: its errors and usage go to stderr, the
// usage being the command's text followed by its flags.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, and when that ends the command says with what
// status: 0 for --help, 2 for bad usage.
func parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	default:
		return 2, true
	}
}
