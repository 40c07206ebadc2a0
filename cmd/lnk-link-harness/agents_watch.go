package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"time"
)

// agentsPoll is how often serve --agents looks at its agents file for an
// agent joining or leaving: one stat a second.
const agentsPoll = time.Second

// errAgentsChanged ends watchAgents: the agents file names other agents.
var errAgentsChanged = errors.New("the agents file changed")

// watchAgents looks at the agents file every poll until ctx ends, and
// returns errAgentsChanged once it names agents other than lines: an
// agent joined or left, or a line changed (agentsWatch.changed).
func watchAgents(ctx context.Context, path string, lines []agentLine, poll time.Duration, logger *slog.Logger) error {
	w := newAgentsWatch(path, lines)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		changed, refused := w.changed()
		if refused != nil {
			logger.LogAttrs(ctx, slog.LevelWarn, "agents file not taken: the agents served are kept", slog.String("err", refused.Error()))
		}
		if changed {
			return errAgentsChanged
		}
	}
}

// agentsWatch is what a look at the agents file compares with: the
// lines served, and the file as last seen.
type agentsWatch struct {
	path    string
	lines   []agentLine
	last    os.FileInfo
	refused string // the last refusal said, said once
}

func newAgentsWatch(path string, lines []agentLine) *agentsWatch {
	last, _ := os.Stat(path)
	return &agentsWatch{path: path, lines: lines, last: last}
}

// changed looks at the file once: a stat, and when it is another file
// (replaced by rename) or its time or size moved, a read. It says changed
// when the file names other agents than those served. A file touched but
// the same, or one that doesn't read (mid-write, or wrong: refused, said
// once until it reads again, which the caller logs), changes nothing:
// the agents served go on.
func (w *agentsWatch) changed() (changed bool, refused error) {
	info, err := os.Stat(w.path)
	if err == nil && w.last != nil && os.SameFile(info, w.last) && info.ModTime().Equal(w.last.ModTime()) && info.Size() == w.last.Size() {
		return false, nil
	}
	w.last = info
	now, err := readAgentsFile(w.path)
	if err != nil {
		if err.Error() == w.refused {
			return false, nil
		}
		w.refused = err.Error()
		return false, err
	}
	w.refused = ""
	return !reflect.DeepEqual(now, w.lines), nil
}

// startAgain starts this program again with the same arguments, its
// output where this one's goes: the next process of serve --agents, which
// reads the agents file anew. It is called once this one listens no more.
func startAgain(stdout, stderr *os.File) func() (int, error) {
	return func() (int, error) {
		exe, err := os.Executable()
		if err != nil {
			return 0, err
		}
		cmd := exec.Command(exe, os.Args[1:]...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		pid := cmd.Process.Pid
		return pid, cmd.Process.Release()
	}
}
