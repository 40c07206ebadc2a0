package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/stdioagent"
	"github.com/lnk-dev/link/internal/testwait"
)

// TestSIGTERMBounded: lnk-acp told SIGTERM while its agent, which
// ignores SIGTERM and lives on once its input ends, runs a turn it never
// ends, ends within its 5 s grace and a little, the agent's whole group
// with it; a second signal ends it at once. Before, it waited for the
// turn for good.
func TestSIGTERMBounded(t *testing.T) {
	t.Setenv(stdioagent.EnvNoTerm, "1")
	t.Setenv(stdioagent.EnvStay, "1")
	for _, second := range []syscall.Signal{0, syscall.SIGINT} {
		name := "SIGTERM"
		if second != 0 {
			name += " then " + second.String()
		}
		t.Run(name, func(t *testing.T) {
			home, keyFile, key := keyedHome(t)
			state := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd, url := runProcess(t, home, keyFile, state)
			defer cmd.Process.Kill()
			hanging(t, ctx, url, key, "telegram:1")
			pgid := lastPgid(t, state)
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			start := time.Now()
			cmd.Process.Signal(syscall.SIGTERM)
			bound := 7 * time.Second // the grace, 5 s, and a little
			if second != 0 {
				// The first one caught: the hub closed, its agent's input ended.
				testwait.For(t, 5*time.Second, "SIGTERM caught, the agent's input ended", func() bool { return strings.Contains(readFile(filepath.Join(state, "log")), "\ninput ended\n") })
				cmd.Process.Signal(second)
				bound = time.Second
			}
			select {
			case <-exited:
			case <-time.After(bound):
				t.Fatalf("lnk-acp still ran %v after %s", time.Since(start), name)
			}
			t.Logf("lnk-acp ended %v after %s", time.Since(start).Round(time.Millisecond), name)
			testwait.For(t, 5*time.Second, "the processes of the agent's group to end with lnk-acp", func() bool { return running(pgid) == 0 })
		})
	}
}

// hanging sends thread a message its agent never answers, and returns
// once it began.
func hanging(t *testing.T, ctx context.Context, url string, key []byte, thread string) {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	began := make(chan struct{}, 1)
	c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
		if strings.Contains(string(params), "hanging") {
			began <- struct{}{}
		}
	})
	t.Cleanup(func() { c.Close() })
	c.Initialize(ctx)
	c.Resume(ctx, thread)
	go c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: "hang"}}, nil)
	select {
	case <-began:
	case <-ctx.Done():
		t.Fatal("the turn never began")
	}
}
