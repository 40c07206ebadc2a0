package main

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
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

	var answered, lost, retried atomic.Int64
	var lostMu sync.Mutex
	var lostWhy []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := agents[g%2]
			thread := "telegram:" + strconv.Itoa(100+g)
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				text := "message " + strconv.Itoa(g) + "." + strconv.Itoa(i)
				got, sent, err := sendOnce(ctx, a, thread, text)
				switch {
				case !sent:
					retried.Add(1)
					time.Sleep(2 * time.Millisecond) // nothing was sent: dial again, as a bridge does
					i--
				case err != nil || !strings.Contains(got, text):
					lost.Add(1)
					lostMu.Lock()
					lostWhy = append(lostWhy, text+": "+got+" "+errString(err))
					lostMu.Unlock()
				default:
					answered.Add(1)
				}
			}
		}()
	}
	const restarts = 4
	for r := range restarts {
		// Restart once this process has answered some messages.
		for want := answered.Load() + 16; answered.Load() < want; {
			if ctx.Err() != nil {
				t.Fatalf("restart %d: %d answered, stuck", r, answered.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
		stop()
		_, stop = startAgents(t, agents, "--model", "offline")
	}
	for want := answered.Load() + 16; answered.Load() < want && ctx.Err() == nil; {
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	t.Logf("%d restarts: %d messages answered, %d dials refused and made again, %d lost", restarts, answered.Load(), retried.Load(), lost.Load())
	if lost.Load() != 0 {
		t.Fatalf("%d messages lost: %q", lost.Load(), lostWhy)
	}
}

// sendOnce sends one message to a; sent says whether the message went
// (the dial, its proof and upgrade, succeeded).
func sendOnce(ctx context.Context, a *testAgent, thread, text string) (got string, sent bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var b strings.Builder
	c, err := client(ctx, a.url, a.key, a.line.Name, "", &b)
	if err != nil {
		var de *endpoint.DialError
		return "", !errors.As(err, &de), err
	}
	defer c.Close()
	if err := c.Resume(ctx, thread); err != nil {
		return "", true, err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		return "", true, err
	}
	c.Close()
	return b.String(), true, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
