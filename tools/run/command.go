package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/lnk-dev/link/tools/sandbox"
)

// The bounds of a call's command.
const (
	maxArgs      = 4096        // arguments of a program
	maxArgsBytes = 256 << 10   // bytes of the program, its arguments, or a shell line
	maxArg       = 128<<10 - 1 // bytes of one argument or a shell line: the kernel's most for one (MAX_ARG_STRLEN, its NUL counted)
)

// CommandIn is run__command's arguments.
type CommandIn struct {
	Command []string `json:"command,omitempty" jsonschema:"the program and its arguments, each as it is (no shell): [\"ls\", \"-la\"]"`
	Shell   string   `json:"shell,omitempty" jsonschema:"a shell line run by /bin/sh -c, for pipes, redirections and &&: \"go test ./... 2>&1 | tail -20\""`
	Timeout int      `json:"timeout,omitempty" jsonschema:"seconds before the command is killed: the agent's default unless said, at most its ceiling"`
}

// Check says which rule in breaks, if any.
func (in CommandIn) Check() error {
	switch {
	case len(in.Command) == 0 && in.Shell == "":
		return errors.New("say a command (a program and its arguments) or a shell line")
	case len(in.Command) > 0 && in.Shell != "":
		return errors.New("say a command or a shell line, not both")
	case len(in.Command) > maxArgs:
		return fmt.Errorf("a command has at most %d arguments", maxArgs)
	case len(in.Command) > 0 && in.Command[0] == "":
		return errors.New("the command's program is empty")
	case in.Timeout < 0:
		return errors.New("timeout is seconds, 1 or more")
	}
	n, longest := len(in.Shell), len(in.Shell)
	for _, a := range in.Command {
		n += len(a)
		longest = max(longest, len(a))
	}
	if longest > maxArg {
		return fmt.Errorf("an argument or a shell line is %d bytes, past the %d the kernel gives a program in one (write it to a file of the workspace and run that)", longest, maxArg)
	}
	if n > maxArgsBytes {
		return fmt.Errorf("the command is %d bytes, past the %d a call may send", n, maxArgsBytes)
	}
	if strings.ContainsRune(in.Shell, 0) || strings.ContainsRune(strings.Join(in.Command, ""), 0) {
		return errors.New("the command holds a NUL byte, which no program can be given")
	}
	return nil
}

// args is the program to run: the command, or the shell with its line.
func (in CommandIn) args() []string {
	if in.Shell != "" {
		return []string{"/bin/sh", "-c", in.Shell}
	}
	return in.Command
}

// specOf is in's command as s runs it in the sandbox over workspace:
// run__command's, and run__start's kept for its supervisor.
func specOf(workspace string, s Settings, in CommandIn) sandbox.Spec {
	env := map[string]string{}
	for k, v := range s.Env {
		env[k] = v
	}
	return sandbox.Spec{
		Args:       in.args(),
		Dir:        workspace,
		Env:        sandbox.Env(workspace, env),
		Network:    s.Network,
		Read:       s.Read,
		Limits:     s.Limits,
		Unconfined: s.Sandbox == "off",
	}
}

// Result is what became of a command.
type Result struct {
	Exit     int           // its exit status; 128+n killed by signal n
	TimedOut time.Duration // killed at its timeout, this long
	Canceled bool          // killed because the call was canceled
	Took     time.Duration
	Stdout   string // kept of it (head and tail, the cut said)
	Stderr   string
	Cut      int64 // bytes of output left out
}

// Run runs in's command in a sandbox over workspace, as s says, and
// kills every process of it at its timeout or when ctx ends.
func Run(ctx context.Context, workspace string, s Settings, in CommandIn) (Result, error) {
	if err := in.Check(); err != nil {
		return Result{}, err
	}
	timeout := s.Timeout
	if in.Timeout > 0 {
		if in.Timeout > s.MaxTimeout {
			return Result{}, fmt.Errorf("timeout %d s is past the agent's ceiling, %d s (config.json's run.max_timeout)", in.Timeout, s.MaxTimeout)
		}
		timeout = in.Timeout
	}
	cmd, err := sandbox.Command(specOf(workspace, s, in))
	if err != nil {
		return Result{}, err
	}
	stdout, stderr := newCapped(s.Output), newCapped(max(s.Output/4, leastOutput))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A process that slipped out of the call holding its output
	// (unconfined alone) is let go of after this.
	cmd.WaitDelay = 2 * time.Second
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start the command: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(time.Duration(timeout) * time.Second)
	defer timer.Stop()
	var r Result
	var werr error
	select {
	case werr = <-done:
	case <-timer.C:
		r.TimedOut = time.Duration(timeout) * time.Second
		killGroup(cmd.Process)
		werr = <-done
	case <-ctx.Done():
		r.Canceled = true
		killGroup(cmd.Process)
		werr = <-done
	}
	r.Took = time.Since(began)
	r.Exit = 0
	if ps := cmd.ProcessState; ps != nil {
		r.Exit = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Exit = 128 + int(ws.Signal())
		}
	} else if werr != nil {
		return Result{}, werr
	}
	var c1, c2 int64
	r.Stdout, c1 = stdout.text()
	r.Stderr, c2 = stderr.text()
	r.Cut = c1 + c2
	return r, nil
}

// Text is r as run__command answers it: how it ended, then its standard
// output and error, each said only when there is some.
func (r Result) Text() string {
	var b strings.Builder
	took := r.Took.Round(time.Millisecond)
	switch {
	case r.TimedOut > 0:
		fmt.Fprintf(&b, "Killed at its timeout, %s, with every process it started (the call's timeout may be raised up to the agent's ceiling).\n", r.TimedOut)
	case r.Canceled:
		fmt.Fprintf(&b, "Killed after %s: the call was canceled.\n", took)
	case r.Exit > 128 && r.Exit < 128+65:
		fmt.Fprintf(&b, "Killed by signal %d (%s) after %s.\n", r.Exit-128, syscall.Signal(r.Exit-128), took)
	default:
		fmt.Fprintf(&b, "Exit status %d after %s.\n", r.Exit, took)
	}
	if r.Stdout == "" && r.Stderr == "" {
		b.WriteString("No output.\n")
	}
	if r.Stdout != "" {
		b.WriteString("stdout:\n")
		b.WriteString(r.Stdout)
		if !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteString("\n[no newline at the end]\n")
		}
	}
	if r.Stderr != "" {
		b.WriteString("stderr:\n")
		b.WriteString(r.Stderr)
		if !strings.HasSuffix(r.Stderr, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
