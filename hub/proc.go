package hub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// proc is one run of the harness's command: its own process group, its
// standard input and output for ACP, its standard error logged.
type proc struct {
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	stdout     io.ReadCloser
	stderr     io.ReadCloser
	exited     chan struct{} // closed once the command's process is reaped
	err        error         // how it exited, once exited is closed
	stderrDone chan struct{} // closed once its standard error is read to its end

	mu   sync.Mutex
	last []string // its last lines of standard error, for a failure's reason
}

// maxStderrLine bounds a line of the harness's standard error as logged
// and kept; lastStderr is how many lines are kept.
const (
	maxStderrLine = 1 << 10
	lastStderr    = 4
)

// startProc starts command in a process group of its own, under a
// keeper where there is one (KeeperMain), told grace.
func startProc(command []string, env []string, dir string, grace time.Duration, log *slog.Logger) (*proc, error) {
	name := command[0]
	command, env, kept := keeperCommand(command, env, grace)
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	ownGroup(cmd, kept)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	go func() {
		defer close(p.stderrDone)
		p.readStderr(stderr, log)
	}()
	go func() {
		// The process is reaped as soon as it exits, whatever still holds
		// its pipes (a grandchild may): cmd.Wait would first wait for
		// them. stop closes the pipes.
		state, err := cmd.Process.Wait()
		if err == nil && !state.Success() {
			err = &exec.ExitError{ProcessState: state}
		}
		p.err = err
		close(p.exited)
	}()
	return p, nil
}

// readStderr logs each line of r, bounded, keeping the last few.
func (p *proc) readStderr(r io.Reader, log *slog.Logger) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := strings.TrimRight(string(line), "\r\n")
			if len(text) > maxStderrLine {
				text = text[:maxStderrLine]
			}
			if text != "" {
				log.Debug("harness stderr", slog.String("line", text))
				p.mu.Lock()
				p.last = append(p.last, text)
				if len(p.last) > lastStderr {
					p.last = p.last[1:]
				}
				p.mu.Unlock()
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long line
				_, err = br.ReadSlice('\n')
			}
		}
		if err != nil {
			return
		}
	}
}

// why says how the process ended, with its last line of standard error;
// it waits a little for the process's exit and the end of that output.
func (p *proc) why() string {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	select {
	case <-p.exited:
	case <-ctx.Done():
	}
	select {
	case <-p.stderrDone:
	case <-ctx.Done():
	}
	var b strings.Builder
	select {
	case <-p.exited:
		if p.err != nil {
			b.WriteString(p.err.Error())
		} else {
			b.WriteString("exited with status 0")
		}
	default:
		b.WriteString("its output ended")
	}
	p.mu.Lock()
	if n := len(p.last); n > 0 {
		b.WriteString(": ")
		b.WriteString(p.last[n-1])
	}
	p.mu.Unlock()
	return b.String()
}

// stop ends the whole process group: SIGTERM, then SIGKILL after grace,
// and waits until the command's process is reaped and the group is gone
// (or ctx ends).
func (p *proc) stop(ctx context.Context, grace time.Duration) {
	defer func() {
		p.stdout.Close()
		p.stderr.Close()
	}()
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	signalGroup(pgid, false)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
		if !groupAlive(pgid) {
			return
		}
		select { // the leader went; what's left of its group gets its grace too
		case <-t.C:
		case <-ctx.Done():
		case <-groupGone(ctx, pgid):
			return
		}
	case <-t.C:
	case <-ctx.Done():
	}
	// What it started, in its group or not, is killed too: a keeper
	// (KeeperMain) killed here before it killed them leaves them to us.
	tree := under(pgid)
	signalGroup(pgid, true)
	killEach(tree)
	select {
	case <-p.exited:
	case <-ctx.Done():
		return
	}
	<-groupGone(ctx, pgid, tree...)
}

// groupGone is closed once no process of group pgid, nor of also, is left
// (those it adopted reaped), or ctx ends; call it once the group's
// leader is reaped.
func groupGone(ctx context.Context, pgid int, also ...int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
			reapGroup(pgid)
			left := reapEach(also)
			if !groupAlive(pgid) && !left {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
	}()
	return ch
}
