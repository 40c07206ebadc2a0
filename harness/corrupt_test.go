package harness_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/folder"
)

// logBuffer is a log's output, safe to write from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// One bad file is one bad conversation: among 100 conversations, each
// with an answer pending, each file of one of them that recover or the
// sweep reads is made corrupt in turn. Every other answer is handed over,
// once, a turn a crash left elsewhere is still finished and its answer
// handed over, and no recover fails. A corrupt answers.json is set aside
// for a person and named in the log once, at whatever number of
// recovers.
func TestOneBadFileOneConversation(t *testing.T) {
	const bad = "telegram:37" // its message unanswered, so the sweep reads all of it
	files := map[string]func(t *testing.T, r *rig, dir string){
		folder.Answers: func(t *testing.T, r *rig, dir string) { corrupt(t, filepath.Join(dir, folder.Answers)) },
		"events.jsonl": func(t *testing.T, r *rig, dir string) { corrupt(t, filepath.Join(dir, "events.jsonl")) },
		"lease.json":   func(t *testing.T, r *rig, dir string) { corrupt(t, filepath.Join(dir, "lease.json")) },
		folder.Tools:   func(t *testing.T, r *rig, dir string) { corrupt(t, filepath.Join(dir, folder.Tools)) },
		folder.End:     func(t *testing.T, r *rig, dir string) { corrupt(t, filepath.Join(dir, folder.End)) },
		"sending": func(t *testing.T, r *rig, dir string) {
			id := held(t, r, bad, 2, time.Now().UTC(), "held")
			corrupt(t, filepath.Join(r.Answers().Paths.Chats(), delivery.SendingDir, id+".json"))
		},
	}
	for name, spoil := range files {
		t.Run(name, func(t *testing.T) {
			var logs logBuffer
			r := newRig(t, func(c *harness.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			a := r.Answers()
			var want []string
			for i := range 100 {
				th := fmt.Sprintf("telegram:%d", i)
				msg := store.Event{Kind: store.KindMessage, Text: "hi"}
				if th == bad || i == 99 {
					crashed(t, r.Home, th, msg) // unanswered: the sweep finishes it
				} else {
					crashed(t, r.Home, th, msg, store.Event{Kind: store.KindAnswer, Text: "answered", Seen: 1})
				}
				if _, err := a.Keep(t.Context(), th, "pending of "+th, time.Time{}, 0); err != nil {
					t.Fatal(err)
				}
				if th != bad {
					want = append(want, "pending of "+th)
				}
			}
			want = append(want, "finished telegram:99")
			dir, _ := a.Paths.Conversation(bad)
			if err := os.WriteFile(filepath.Join(dir, folder.Tools), []byte(`["memory__search"]`), 0o600); err != nil {
				t.Fatal(err)
			}
			spoil(t, r, dir)
			r.Model.Push(model.Response{Text: "finished"}, model.Response{Text: "finished"})
			var got []string
			for range 3 {
				for _, k := range r.recover(t, map[string]any{}).Answers {
					text := k.Text
					if text == "finished" {
						text += " " + k.Thread
					}
					got = append(got, text)
				}
				r.Harness.WaitTasks() // the sweep the recover started, and its turns
			}
			// The bad conversation's own answers are its business: whatever
			// of them is handed over is handed over once.
			var others, its []string
			for _, g := range got {
				if strings.HasSuffix(g, bad) {
					its = append(its, g)
				} else {
					others = append(others, g)
				}
			}
			slices.Sort(want)
			slices.Sort(others)
			if diff := cmp.Diff(want, others); diff != "" {
				t.Fatalf("handed over (-want +got):\n%s", diff)
			}
			if len(its) != len(slices.Compact(slices.Clone(its))) {
				t.Fatalf("the bad conversation's answers handed over twice: %q", its)
			}
			if name != folder.Answers {
				return
			}
			aside, _ := filepath.Glob(filepath.Join(dir, folder.AnswersAside+"*"))
			if len(aside) != 1 {
				t.Fatalf("set aside %v, want one", aside)
			}
			if n := strings.Count(logs.String(), "set aside"); n != 1 {
				t.Fatalf("named in the log %d times after 3 recovers, want once:\n%s", n, logs.String())
			}
		})
	}
}

// corrupt makes the file at path one that doesn't read as what it is.
func corrupt(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(`[{"id": 5}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
