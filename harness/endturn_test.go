package harness_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
)

// endRecorder is the test tools, noting each end of a turn's tools it is
// told of: "agent" for EndTurn, "agent thread" for EndThreadTurn.
type endRecorder struct {
	*harnesstest.Tools
	mu    sync.Mutex
	ended []string
}

func (e *endRecorder) EndTurn(ctx context.Context, agent string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = append(e.ended, "EndTurn "+agent)
}

func (e *endRecorder) ends() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ended)
}

// threadEnder keeps each conversation's sessions apart: ThreadEnder.
type threadEnder struct{ *endRecorder }

func (e threadEnder) EndThreadTurn(ctx context.Context, agent, thread string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = append(e.ended, "EndThreadTurn "+agent+" "+thread)
}

var _ harness.ThreadEnder = threadEnder{}

// A turn's end ends the tools' sessions of its conversation alone when
// the tools keep each conversation's apart (ThreadEnder), and every one
// of the agent's through EndTurn when they don't.
func TestEndTurnOfThread(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools func(*endRecorder) harness.Tools
		want  []string
	}{
		{"EndTurn", func(e *endRecorder) harness.Tools { return e }, []string{"EndTurn " + testAgent}},
		{"ThreadEnder", func(e *endRecorder) harness.Tools { return threadEnder{e} }, []string{"EndThreadTurn " + testAgent + " telegram:71"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &endRecorder{Tools: newTestTools()}
			r := newRig(t, func(c *harness.Config) { c.Tools = tc.tools(rec) })
			r.Model.Push(model.Response{Text: "done"})
			if _, _, err := r.Say("telegram:71", "hello", nil); err != nil {
				t.Fatal(err)
			}
			if got := rec.ends(); !slices.Equal(got, tc.want) {
				t.Fatalf("ended %q, want %q", got, tc.want)
			}
		})
	}
}
