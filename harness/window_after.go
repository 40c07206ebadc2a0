package harness

import (
	"context"
)

// waitSummarized waits, when a turn here summarizes c after its answer,
// until it has let its lease go, so the message that came meanwhile is
// answered in a turn of its own rather than joining one whose answer is
// given.
func (h *Harness) waitSummarized(ctx context.Context, c *conv) error {
	v, ok := h.summarizing.Load(turnKey(c.agent, c.thread))
	if !ok {
		return nil
	}
	if h.onWaitSummarized != nil {
		h.onWaitSummarized()
	}
	select {
	case <-v.(chan struct{}):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
