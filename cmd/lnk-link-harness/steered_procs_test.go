//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSteeredProcs: two lnk-link-harness serve processes sharing one
// agent's conversations kept by driver (Cloud Storage: homes of their
// own and one bucket, a fake-gcs-server; SQLite: one home, its one
// file), and rounds of four lnk agent chat send run at once, alternating
// between them, in one link: thread: every send prints an answer, the
// steered ones the answer kept for them by the process they sent to.
func testSteeredProcs(t *testing.T, dir, driver string) {
	lnk := filepath.Join(dir, "lnk")
	env := childEnv(nil)
	var homes, keyFiles []string
	home, _, keyFile := newAgent(t, driver)
	homes, keyFiles = append(homes, home, home), append(keyFiles, keyFile, keyFile)
	if driver == "gcs" {
		srv := fakeBucket(t)
		env = childEnv(map[string]string{"LNK_GCS_BUCKET": "chats", "LNK_GCS_ENDPOINT": srv.URL() + "/storage/v1/"})
		homes[1], _, keyFiles[1] = newAgent(t, driver)
	}
	var procs []*harnessProc
	for i := range 2 {
		procs = append(procs, startProc(t, filepath.Join(dir, "lnk-link-harness"), homes[i], keyFiles[i], env, "--model", "offline", "--store-child"))
	}
	const rounds, n, thread = 6, 4, "link:same"
	steered, failed := 0, 0
	for round := range rounds {
		type sent struct {
			text           string
			code           error
			stdout, stderr bytes.Buffer
		}
		out := make([]*sent, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			s := &sent{text: fmt.Sprintf("m-%d-%d", round, i)}
			out[i] = s
			p := (round + i) % len(procs)
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			cmd := exec.CommandContext(ctx, lnk, "agent", "chat", "send", "--endpoint", procs[p].url, "--key-file", keyFiles[p], "--home", homes[p], "--thread", thread, "--wait", "15s", s.text)
			cmd.Env, cmd.Stdout, cmd.Stderr = env, &s.stdout, &s.stderr
			wg.Go(func() {
				defer cancel()
				<-start
				s.code = cmd.Run()
			})
		}
		close(start)
		wg.Wait()
		for _, s := range out {
			joined := strings.Contains(s.stderr.String(), "joined the turn already running")
			if joined {
				steered++
			}
			if s.code != nil || !strings.Contains(s.stdout.String(), "You said") {
				failed++
				t.Errorf("%s (steered %v): %v, printed %q: %s", s.text, joined, s.code, s.stdout.String(), s.stderr.String())
			}
		}
	}
	t.Logf("%d lnk agent chat send in %d rounds of %d at once to 2 processes on %s: %d steered, %d without an answer", rounds*n, rounds, n, driver, steered, failed)
}
