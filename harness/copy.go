package harness

import (
	"context"
	"log/slog"

	"github.com/lnk-dev/link/store/transcript"
)

// addCopy adds to the conversation's copy for people (chat.md) what was
// said since it was last added to, up to the turn's last answer, from the
// events the turn holds; a compact conversation has none. It runs under
// the turn's lease, once its answer is stored, so two turns never add to
// one copy at once. The copy is derived: a failure is logged, never the
// turn's, and the next answer makes it again from the events when it
// doesn't end with the last answer.
func (t *turn) addCopy(ctx context.Context) {
	err := transcript.Append(ctx, t.c.paths, t.c.keeper(), t.c.thread, t.c.pinned.Kind(), t.events)
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "add to the copy for people", slog.String("agent", t.c.agent), slog.String("thread", t.c.thread), slog.String("err", err.Error()))
	}
}
