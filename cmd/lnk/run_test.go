package main

import (
	"context"
	"io"
	"os"

	"github.com/lnk-dev/link/cmd/internal/environ"
)

// How the tests run lnk: the real command tree through Main, a command's
// words first and its arguments after, as a person types them.

// run runs lnk's command line args with the process's environment.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return NewMain(stdout, stderr, environ.Map()).Run(ctx, args)
}

// runChat runs lnk agent chat with args, its messages read from in;
// prompt says in is a terminal, and intr, when not nil, stands for Ctrl-C.
func runChat(ctx context.Context, args []string, env map[string]string, in io.Reader, prompt bool, intr <-chan os.Signal, stdout, stderr io.Writer) int {
	m := NewMain(stdout, stderr, env)
	m.Stdin, m.Terminal, m.Interrupts = in, prompt, intr
	return m.Run(ctx, append([]string{"agent", "chat"}, args...))
}

// runChatSend runs lnk agent chat send with args.
func runChatSend(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	return NewMain(stdout, stderr, env).Run(ctx, append([]string{"agent", "chat", "send"}, args...))
}

// runMeasure runs lnk measure with args.
func runMeasure(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"measure"}, args...), stdout, stderr)
}

// runModelShow runs lnk model show with args.
func runModelShow(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	return NewMain(stdout, stderr, env).Run(ctx, append([]string{"model", "show"}, args...))
}
