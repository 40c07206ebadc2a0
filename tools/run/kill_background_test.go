package run_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/mcpserve"
	"github.com/lnk-dev/link/tools/run"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/send"
)

// backgroundEnv makes the test binary a run server with background
// commands of the home it names, telling their ends through an outbox in
// its run folder to the endpoint $LNK_RUN_TEST_TARGET names (its URL, a
// space, its key), printing its URL: a process of its own, to be killed.
const (
	backgroundEnv = "LNK_RUN_TEST_BACKGROUND"
	targetEnv     = "LNK_RUN_TEST_TARGET"
)

func serveBackgroundHelper(home string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, err := store.For(home, "main")
	if err != nil {
		return fail(err)
	}
	box, err := send.OpenOutbox(filepath.Join(p.Root, "run", "outbox"), nil)
	if err != nil {
		return fail(err)
	}
	d := &send.Deliverer{Outbox: box, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}
	d.Start(context.Background())
	url, key, _ := strings.Cut(os.Getenv(targetEnv), " ")
	d.SetTarget(send.Target{URL: url, Key: []byte(key), Agent: harnesstest.Agent})
	m, err := background.Open(background.Options{Dir: filepath.Join(p.Root, "run"), Teller: run.Teller{Deliver: d}, Poll: 50 * time.Millisecond, Grace: 200 * time.Millisecond})
	if err != nil {
		return fail(err)
	}
	opts := run.Options{Paths: p, Background: m}
	r, err := run.Tool.Start(context.Background(), run.Handler(run.New(opts), opts), "127.0.0.1:0", mcpserve.NewSecret())
	if err != nil {
		return fail(err)
	}
	fmt.Println(r.URL())
	select {} // until killed
}

// startBackgroundHelper starts a run server of home in a process of its
// own, telling ends to r, and a session with it.
func startBackgroundHelper(t *testing.T, home string, r *harnesstest.Rig) (*exec.Cmd, *mcp.ClientSession) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), backgroundEnv+"="+home, targetEnv+"="+r.URL+" "+string(r.Key))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return cmd, connect(t, strings.TrimSpace(line))
}

// told counts the messages r stored in thread from each run:<id>, and
// says whether each has the message id its end is keyed by.
func told(r *harnesstest.Rig, thread string) (map[string]int, bool) {
	n := map[string]int{}
	keyed := true
	for _, e := range r.Events(thread) {
		if id, ok := strings.CutPrefix(e.From, "run:"); ok && e.Kind == store.KindMessage {
			n[id]++
			keyed = keyed && e.MessageID == "run."+id
		}
	}
	return n, keyed
}

// 100 background commands through run's server, started and stopped or
// ending on their own, the server killed with SIGKILL while 20 run (10 of
// them ending while no server runs) and started again: the agent's
// harness stores each end not stopped exactly once, from run:<id>, keyed
// by it; no stopped command's end; and no process of any command is left.
func TestBackgroundServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("100 sandboxed commands: not in -short")
	}
	r := harnesstest.New(t)
	for range 100 {
		r.Model.Push(model.Response{Text: "noted"})
	}
	p := newHome(t, `{"run": {"background": {"max_running": 100}}}`)
	home := filepath.Dir(filepath.Dir(p.Root))
	// A test failed midway leaves no command running: each supervisor
	// (whose command dies with it) is killed.
	t.Cleanup(func() {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), background.SupervisorArg) && strings.Contains(string(b), home) {
				var pid int
				fmt.Sscan(e.Name(), &pid)
				if proc, err := os.FindProcess(pid); err == nil {
					proc.Kill()
				}
			}
		}
	})
	const thread = "telegram:7"
	cmd, s := startBackgroundHelper(t, home, r)
	// Calls are made 8 at a time, as a model's parallel calls are: each
	// answered, or the test failed.
	start := func(s *mcp.ClientSession, args map[string]any) string {
		text, failed := callIn(t, s, thread, "start", args)
		if failed || !strings.HasPrefix(text, "Started run:") {
			t.Errorf("start %v: %s", args, text)
			return ""
		}
		return text[len("Started run:"):][:8]
	}
	stop := func(s *mcp.ClientSession, id string) {
		if text, failed := callIn(t, s, thread, "stop", map[string]any{"id": id}); failed || !strings.HasPrefix(text, "Stopped run:"+id) {
			t.Errorf("stop %s: %q", id, text)
		}
	}
	quick, stopped, through, gated := make([]string, 40), make([]string, 40), make([]string, 10), make([]string, 10)
	eight(100, func(i int) {
		switch {
		case i < 40:
			quick[i] = start(s, map[string]any{"shell": fmt.Sprintf("echo quick %d", i)})
		case i < 80:
			stopped[i-40] = start(s, map[string]any{"command": []string{"sleep", "7777"}})
		case i < 90:
			through[i-80] = start(s, map[string]any{"command": []string{"sleep", "7777"}})
		default:
			gated[i-90] = start(s, map[string]any{"shell": "while [ ! -e gate ]; do sleep 0.05; done; echo through"})
		}
	})
	eight(len(stopped), func(i int) { stop(s, stopped[i]) })
	if t.Failed() {
		t.FailNow()
	}
	waitTold := func(n int) {
		testwait.For(t, 60*time.Second, fmt.Sprintf("%d ends stored", n), func() bool {
			got, _ := told(r, thread)
			return len(got) >= n
		})
	}
	waitTold(40)

	cmd.Process.Kill()
	cmd.Wait()
	if err := os.WriteFile(filepath.Join(p.Files(), "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range gated {
		testwait.For(t, 30*time.Second, "command "+id+" to end, no server running", func() bool { return exists(filepath.Join(p.Root, "run", id, "end.json")) })
	}

	cmd, s = startBackgroundHelper(t, home, r)
	waitTold(50)
	eight(len(through), func(i int) { stop(s, through[i]) })
	// Nothing waits to be sent: every end recorded reached the harness.
	outbox := filepath.Join(p.Root, "run", "outbox")
	testwait.For(t, 60*time.Second, "the outbox to be empty", func() bool {
		left, _ := filepath.Glob(filepath.Join(outbox, "*.json"))
		return len(left) == 0
	})
	cmd.Process.Kill()
	cmd.Wait()

	got, keyed := told(r, thread)
	for _, id := range append(append([]string{}, quick...), gated...) {
		if got[id] != 1 {
			t.Errorf("the end of %s stored %d times, want once", id, got[id])
		}
		delete(got, id)
	}
	if len(got) > 0 {
		t.Errorf("ends stored of commands stopped (or never started): %v", got)
	}
	if !keyed {
		t.Error("an end stored without its message id, run.<id>")
	}
	gone(t, "sleep 7777")
	gone(t, home)
}

// eight calls f(0) to f(n-1), eight at a time, and waits for them.
func eight(n int, f func(i int)) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}
