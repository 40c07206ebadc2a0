// Package main is the lnk command, how a person uses and inspects Link
// from a terminal: lnk agent chat, lnk agent status, lnk conformance,
// lnk memory serve, lnk measure. Its commands are a spf13/cobra tree
// (cli.go), built anew for each Main.Run. The drivers that keep
// conversations other than as a log or compact run in their plugins
// (lnk-sqlite, lnk-gcs; cmd/internal/drivers).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/cmd/internal/environ"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/sandbox"
)

// helper runs this program as one of the processes lnk starts itself as,
// nothing else of lnk, answering its exit code; ok is false for lnk
// itself. A sandbox's trampoline (lnk run's commands) confines itself
// and runs the command; a background command's supervisor (run__start)
// starts the command in its sandbox, waits for it and records its end.
func helper(args []string) (code int, ok bool) {
	switch {
	case sandbox.IsTrampoline(args):
		return sandbox.Main(), true
	case background.IsSupervisor(args):
		return background.Supervise(args, sandbox.Stored), true
	}
	return 0, false
}

func main() {
	if code, ok := helper(os.Args); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain(os.Stdout, os.Stderr, environ.Map())
	m.Stdin, m.Terminal, m.Signals = os.Stdin, isTerminal(os.Stdin), true
	code := m.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// Main is the program: Run runs one command line until it ends, its
// context ends, or Close; tests run the real program through it.
type Main struct {
	Stdin          io.Reader // lnk agent chat's messages
	Stdout, Stderr io.Writer
	Env            map[string]string // the process's environment, or a test's
	// Terminal says Stdin is a terminal: lnk agent chat shows a prompt.
	Terminal bool
	// Signals says lnk agent chat takes Ctrl-C (SIGINT) itself, to stop an
	// answer; else Interrupts, when not nil, stands for Ctrl-C.
	Signals    bool
	Interrupts <-chan os.Signal

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewMain makes the program with its output and environment, reading
// nothing as its input until Stdin is set.
func NewMain(stdout, stderr io.Writer, env map[string]string) *Main {
	return &Main{Stdin: eofReader{}, Stdout: stdout, Stderr: stderr, Env: env}
}

// eofReader is an input that has ended.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Exit statuses every command shares.
const (
	exitOK    = 0
	exitError = 1 // the command failed
	exitBad   = 2 // bad usage: an unknown command or flag, missing words
)

// Run runs the command line args (without the program's name) and
// returns the process's exit status: 0 done (and for help), 1 failed, 2
// bad usage, or what the command says (lnk conformance's 3).
func (m *Main) Run(ctx context.Context, args []string) int {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	m.mu.Lock()
	m.cancel, m.done = cancel, done
	m.mu.Unlock()
	defer func() {
		cancel()
		close(done)
	}()

	root := m.root()
	root.SetArgs(longFlags(root, args))
	c, err := root.ExecuteContextC(ctx)
	return m.exit(c, err)
}

// Close stops a running Run as a signal does and waits for it.
func (m *Main) Close() error {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	return nil
}

// exit says err, the error command c ended with, on stderr, and returns
// its status.
func (m *Main) exit(c *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st) // the command said why itself
	}
	var u usageError
	if errors.As(err, &u) || isCobraUsage(err) {
		fmt.Fprintf(m.Stderr, "%s: %v\n\n", c.CommandPath(), err)
		writeUsage(m.Stderr, c)
		return exitBad
	}
	fmt.Fprintf(m.Stderr, "%s: %v\n", c.CommandPath(), err)
	return exitError
}

// exitStatus is a command's end whose reason it has said already: a
// RunE returns it for a status other than 0.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// status is nil for 0, else code as the error a RunE returns.
func status(code int) error {
	if code == 0 {
		return nil
	}
	return exitStatus(code)
}

// usageError is a command line a command refuses: it is said with the
// command's usage, and the status is 2.
type usageError struct{ error }

// badUsage is a usageError saying what is wrong.
func badUsage(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}
