package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// An agent joining the agents file restarts the process by itself: the
// file is watched, the process stops like any other stop, the next one is
// started once no port here listens, and it serves the agent that joined.
// Messages sent to the agent already there throughout are each answered:
// none is cut off, and a dial refused sent nothing, so it is made again.
func TestAgentsFileRestarts(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	alpha, beta := fixedAgent(t, dir, home, "alpha"), fixedAgent(t, dir, home, "beta")
	path := filepath.Join(dir, "agents")
	writeAgents(t, path, alpha)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var listening atomic.Int32 // 1: alpha's port took a dial as the next process was started
	next := make(chan *Main, 1)
	var run func() (*Main, chan error)
	run = func() (*Main, chan error) {
		m := NewMain(&syncBuffer{}, &syncBuffer{}, map[string]string{})
		m.AgentsPoll = 10 * time.Millisecond
		if err := m.ParseFlags([]string{"serve", "--agents", path, "--model", "offline"}); err != nil {
			t.Fatal(err)
		}
		m.StartAgain = func() (int, error) {
			if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(alpha.line.Port), time.Second); err == nil {
				c.Close()
				listening.Store(1)
			}
			m2, _ := run()
			next <- m2
			return os.Getpid(), nil
		}
		errc := make(chan error, 1)
		go func() { errc <- m.Run(context.Background()) }()
		select {
		case <-m.Ready():
		case err := <-errc:
			t.Errorf("run: %v", err)
		case <-ctx.Done():
			t.Error("not listening")
		}
		t.Cleanup(func() { m.Close() })
		return m, errc
	}
	_, firstEnded := run()

	load := startLoad(ctx, []*testAgent{alpha}, 4, 200)
	load.waitAnswered(t, ctx, 8, "before beta joins")

	writeAgents(t, path, alpha, beta) // beta joins
	select {
	case err := <-firstEnded:
		if err != nil {
			t.Errorf("the first process ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the agents file changed, and the process went on")
	}
	var second *Main
	select {
	case second = <-next:
	case <-ctx.Done():
		t.Fatal("no next process was started")
	}
	if listening.Load() != 0 {
		t.Error("the next process was started while a port here still listened")
	}
	load.waitAnswered(t, ctx, 8, "after beta joined")
	load.stop(t)
	got, err := sayAs(ctx, second.URL(), beta.key, "beta", "telegram:1", "hello beta")
	if err != nil || !strings.Contains(got, "hello beta") {
		t.Fatalf("the agent that joined answered %q, %v", got, err)
	}

}

// A look at the agents file says changed only for other agents: the same
// file written again, or one that doesn't read (refused once), changes
// nothing; an agent joining or leaving, or a line changed, does.
func TestAgentsWatchChanged(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	alpha, beta := fixedAgent(t, dir, home, "alpha"), fixedAgent(t, dir, home, "beta")
	path := filepath.Join(dir, "agents")
	writeAgents(t, path, alpha)
	lines, err := readAgentsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := newAgentsWatch(path, lines)
	look := func(what string, want, wantRefused bool) {
		t.Helper()
		changed, refused := w.changed()
		if changed != want || (refused != nil) != wantRefused {
			t.Errorf("%s: changed %v, refused %v; want changed %v, refused %v", what, changed, refused, want, wantRefused)
		}
	}
	look("untouched", false, false)
	writeAgents(t, path, alpha)
	look("written again the same", false, false)
	if err := os.WriteFile(path, []byte("{\"name\": \"alpha\""), 0o600); err != nil {
		t.Fatal(err)
	}
	look("half written", false, true)
	if err := os.WriteFile(path, []byte("{\"name\": \"alpha\"}"), 0o600); err != nil {
		t.Fatal(err)
	}
	look("wrong, another way", false, true)
	writeAgents(t, path, alpha)
	look("whole again", false, false)
	writeAgents(t, path, alpha, beta)
	look("beta joined", true, false)
	w = newAgentsWatch(path, lines)
	writeAgents(t, path)
	look("every agent gone: no agents file", false, true)
	w = newAgentsWatch(path, []agentLine{alpha.line, beta.line})
	writeAgents(t, path, alpha)
	look("beta left", true, false)
	w = newAgentsWatch(path, lines)
	moved := *alpha
	moved.line.Port++
	writeAgents(t, path, &moved)
	look("alpha's port changed", true, false)
}

// fixedAgent is an agent on a port free now, with a key file in dir.
func fixedAgent(t *testing.T, dir, home, name string) *testAgent {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := &testAgent{line: agentLine{Name: name, Home: home, Port: port, KeyFile: filepath.Join(dir, name+".key")}, key: []byte(name + "-key-0123456789abcdef")}
	a.url = contract.EndpointURL(port)
	if err := os.WriteFile(a.line.KeyFile, append(a.key, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// writeAgents replaces the agents file at path with agents' lines.
func writeAgents(t *testing.T, path string, agents ...*testAgent) {
	var b []byte
	for _, a := range agents {
		l, _ := json.Marshal(a.line)
		b = append(append(b, l...), '\n')
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
