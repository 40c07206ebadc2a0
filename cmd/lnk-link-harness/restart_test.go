package main

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// An agent joining or leaving restarts the process, stopped like any
// other stop: under load over repeated restarts, every message whose
// connection was taken is answered, never cut off. A dial refused while
// no process listens sent nothing (the proof comes first), so the bridge
// dials again; that is no loss.
func TestRestartLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the program under load")
	}
	home := t.TempDir()
	var agents []*testAgent
	for _, name := range []string{"alpha", "beta"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		agents = append(agents, &testAgent{line: agentLine{Name: name, Home: home, Port: port}, key: []byte(name + "-key-0123456789abcdef")})
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, stop := startAgents(t, agents, "--model", "offline")

	load := startLoad(ctx, agents, 8, 100)
	const restarts = 4
	for r := range restarts {
		// Restart once this process has answered some messages.
		load.waitAnswered(t, ctx, 16, "before restart "+strconv.Itoa(r+1))
		stop()
		_, stop = startAgents(t, agents, "--model", "offline")
	}
	load.waitAnswered(t, ctx, 16, "after the last restart")
	load.stop(t)
	t.Logf("%d restarts: %d messages answered, %d dials refused and made again", restarts, load.answered.Load(), load.redialed.Load())
}
