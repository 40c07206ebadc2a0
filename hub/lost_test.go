package hub

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// TestSessionsFileSetAside: a sessions.json cut short or not JSON at all
// no longer stops the hub at start: it is set aside beside itself
// (sessions.json.corrupt-<time>, its bytes whole), said once in the log,
// and each thread goes on in a new session, told so once in its answer,
// after a restart too; a thread's next message is answered plainly.
func TestSessionsFileSetAside(t *testing.T) {
	for name, bad := range map[string]string{
		"cut short": `{"threads":{"telegram:1":"s-1k2j3","telegram:2":"s-`,
		"garbage":   "\x00\xffnot json at all",
	} {
		t.Run(name, func(t *testing.T) {
			var log syncBuffer
			r := newRig(t, []string{envCaps + "=resume,load"}, func(c *Config) {
				os.WriteFile(c.Sessions, []byte(bad), 0o600)
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			})
			ctx := testCtx(t, 30*time.Second)
			aside, _ := filepath.Glob(r.cfg.Sessions + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("set aside as %v, want one file", aside)
			}
			if b, _ := os.ReadFile(aside[0]); string(b) != bad {
				t.Errorf("the file set aside holds %q, want %q", b, bad)
			}
			if n := strings.Count(log.String(), "set aside a sessions.json"); n != 1 || !strings.Contains(log.String(), aside[0]) {
				t.Errorf("said %d times in the log, naming it %v:\n%s", n, strings.Contains(log.String(), aside[0]), log.String())
			}
			if got := r.message(ctx, "telegram:1", "one", nil).must(t); got != resetNote+"echo: one" {
				t.Errorf("the thread's first message after its session was lost was answered %q, want the notice first", got)
			}
			if got := r.message(ctx, "telegram:1", "two", nil).must(t); got != "echo: two" {
				t.Errorf("its next message was answered %q, want no notice again", got)
			}
			r.restart()
			if got := r.message(ctx, "telegram:2", "three", nil).must(t); got != resetNote+"echo: three" {
				t.Errorf("after a restart, another thread's first message was answered %q, want the notice first", got)
			}
			if got := r.message(ctx, "telegram:1", "history", nil).must(t); got != `history: "one" | "two"` {
				t.Errorf("after a restart the first thread's history is %q, want its new session's", got)
			}
			if again, _ := filepath.Glob(r.cfg.Sessions + ".corrupt-*"); len(again) != 1 {
				t.Errorf("after a restart %d files set aside, want the one", len(again))
			}
		})
	}
}

// TestAnswersFileSetAside: an answers.json cut short or not JSON at all
// no longer stops the hub at start: it is set aside beside itself
// (answers.json.corrupt-<time>, its bytes whole), said once in the log,
// and the hub serves on: an answer kept after is handed over by a
// recover on a real endpoint, under an id none of the file's had, so a
// done of an id handed over before the loss lets it not go.
func TestAnswersFileSetAside(t *testing.T) {
	for name, bad := range map[string]string{
		"cut short": `{"next":3,"answers":[{"id":"hub-3","thread":"telegram:1","text":"a`,
		"garbage":   "\x00\xffnot json at all",
	} {
		t.Run(name, func(t *testing.T) {
			var log syncBuffer
			path := filepath.Join(t.TempDir(), "answers.json")
			if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			r := newRig(t, nil, func(c *Config) {
				c.Answers = path
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			})
			ctx := testCtx(t, 30*time.Second)
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("set aside as %v, want one file", aside)
			}
			if b, _ := os.ReadFile(aside[0]); string(b) != bad {
				t.Errorf("the file set aside holds %q, want %q", b, bad)
			}
			if n := strings.Count(log.String(), "set aside answers that don't read"); n != 1 || !strings.Contains(log.String(), aside[0]) {
				t.Errorf("said %d times in the log, naming it %v:\n%s", n, strings.Contains(log.String(), aside[0]), log.String())
			}
			if got := r.message(ctx, "telegram:1", "one", nil).must(t); got != "echo: one" {
				t.Errorf("a message after the set-aside was answered %q", got)
			}
			r.hub.answers.keep("telegram:1", "kept after")
			if _, err := r.recoverAsk(ctx, contract.RecoverParams{Done: []string{"hub-1", "hub-3"}}); err != nil {
				t.Fatal(err)
			}
			got, err := r.recoverAsk(ctx, contract.RecoverParams{})
			if err != nil || len(got.Answers) != 1 || got.Answers[0].Text != "kept after" {
				t.Fatalf("recover after the set-aside: %+v, %v; want the answer kept after", got.Answers, err)
			}
		})
	}
}
