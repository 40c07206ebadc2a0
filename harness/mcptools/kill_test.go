package mcptools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// The environment of the helper process: a harness over these tools,
// killed by the test mid-call.
const (
	helperEnv  = "LNK_TOOLS_TEST_HARNESS" // its mode: unanswered or answered
	helperHome = "LNK_TOOLS_TEST_HOME"
	killThread = "telegram:9"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(harnessProcess(mode))
	}
	os.Exit(m.Run())
}

// harnessProcess is a Link Harness process with the MCP tools its
// environment names, answering one message: its model calls
// blocker__block (unanswered: the tool holds the call until the process
// is killed) or blocker__search (answered: the tool answers, and the
// model's next round holds until the process is killed).
func harnessProcess(mode string) int {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	home := env[helperHome]
	tl, err := ForHome(home, env, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	q := scripted.New()
	switch mode {
	case "unanswered":
		q.Push(model.Response{Calls: []model.ToolCall{{ID: "call-1", Name: "blocker__block"}}})
	case "answered":
		q.Push(model.Response{Calls: []model.ToolCall{{ID: "call-1", Name: "blocker__search", Input: `{"q":"x"}`}}}, model.Response{Text: "never"})
		q.Before = func(ctx context.Context, req model.Request) error {
			if len(req.Messages) > 1 {
				<-ctx.Done() // held until killed
			}
			return nil
		}
	}
	h, err := harness.New(turnsConfig(home, tl, q, nil))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = h.Prompt(context.Background(), acp.Prompt{Agent: agent, Thread: killThread, Blocks: []acp.Block{{Type: "text", Text: "go"}}}, &stream{})
	fmt.Fprintln(os.Stderr, "the turn ended, never killed:", err)
	return 1
}

// A harness process SIGKILLed mid-call, and one started after it on the
// same store: a call's answer that came is kept once and given to the
// model once; a call without one is told to the model as unanswered; no
// call is made twice.
func TestKilledMidCall(t *testing.T) {
	for _, mode := range []string{"unanswered", "answered"} {
		t.Run(mode, func(t *testing.T) {
			blocker := newMCPServer(t, "blocker", serverOpts{calls: []string{"block", "search"}})
			home := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperHome+"="+home, "LNK_TOOL_BLOCKER="+blocker.url())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Kill it once the call reached the tool, or once its answer
			// is kept.
			if err := testwait.Err(20*time.Second, "the call to reach the tool", func() bool {
				select {
				case err := <-exited:
					t.Fatalf("the harness process ended first (%v): %s", err, stderr.String())
				default:
				}
				_, _, calls := blocker.counts()
				return mode == "unanswered" && calls == 1 || mode == "answered" && toolResults(t, home, "call-1") == 1
			}); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited

			// Another process takes the conversation once the dead turn's
			// lease is over.
			e := &env{vars: map[string]string{"LNK_TOOL_BLOCKER": blocker.url()}}
			r := newTurns(t, home, newTools(t, home, e))
			r.q.Push(model.Response{Text: "finished"})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			testwait.For(t, 20*time.Second, "the killed turn finished by a sweep", func() bool {
				if answered(t, home) {
					return true
				}
				if err := r.h.Sweep(ctx, agent); err != nil {
					t.Fatal(err)
				}
				return false
			})
			reqs := r.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model calls finishing the turn, want 1", len(reqs))
			}
			var results []model.Part
			for _, m := range reqs[0].Messages {
				for _, p := range m.Parts {
					if p.Kind == model.KindToolResult && p.ID == "call-1" {
						results = append(results, p)
					}
				}
			}
			if len(results) != 1 {
				t.Fatalf("the call answered %d times in the prompt: %+v", len(results), results)
			}
			_, _, calls := blocker.counts()
			switch mode {
			case "unanswered":
				if !results[0].IsError || !strings.HasPrefix(results[0].Text, "Unanswered") {
					t.Fatalf("the unanswered call was told as %+v", results[0])
				}
				if n := toolResults(t, home, "call-1"); n != 0 {
					t.Fatalf("%d answers kept of a call never answered", n)
				}
			case "answered":
				if results[0].IsError || results[0].Text != `blocker says search {"q":"x"}` {
					t.Fatalf("the answered call was told as %+v", results[0])
				}
				if n := toolResults(t, home, "call-1"); n != 1 {
					t.Fatalf("its answer kept %d times", n)
				}
			}
			if calls != 1 {
				t.Fatalf("the tool got %d calls, want 1: none made twice", calls)
			}
		})
	}
}

// toolResults counts the answers kept of call id.
func toolResults(t *testing.T, home, id string) int {
	n := 0
	for _, e := range events(t, home, killThread) {
		if e.Kind == store.KindToolResult && e.CallID == id {
			n++
		}
	}
	return n
}

// answered says whether the killed conversation's last event is a final
// answer.
func answered(t *testing.T, home string) bool {
	evs := events(t, home, killThread)
	return len(evs) > 0 && store.FinalAnswer(evs[len(evs)-1])
}
