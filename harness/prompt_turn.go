package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// Prompt answers one prompt of agent p.Agent in three steps: it steers
// the running turn or begins one (steerOrBegin), runs the turn, streaming
// its answer, and delivers the answer (deliver). The turn runs on the
// harness's own life, not the caller's: a caller gone leaves it running,
// and its answer is kept for _link/recover. An answer to a caller still
// there is held, from just before its event is stored, until Serve has
// written the response (acp.Outcome.Delivered lets it go), so a kill in
// between loses nothing (store/delivery).
func (h *Harness) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	ans, err := h.prompt(ctx, p, s)
	return ans, h.callerError(ctx, p, err)
}

func (h *Harness) prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	if !h.begin() {
		return acp.Outcome{}, ErrClosing
	}
	defer h.end()
	t, ans, err := h.steerOrBegin(ctx, p, s)
	if t == nil {
		return ans, err
	}
	defer h.ran(t) // noted running by steerOrBegin (cancel.go)
	// From here the turn is the harness's: it runs to its end whatever
	// the caller does.
	tctx, cancel := context.WithCancel(h.life)
	defer cancel()
	final, err := t.run(tctx)
	ans, err = t.deliver(tctx, final, err)
	if t.summaryDue != nil {
		h.afterAnswer(t) // the answer first, then the summary (turn.go)
	}
	return ans, err
}

// steerOrBegin takes a prompt as far as its turn: it narrows the
// conversation's tools, sets its model if the message says one, and
// stores the message with its header and tells _link/taken. A message
// that comes while a turn of its conversation runs (here or in another
// process) joins that turn: it is stored as steered and answered at once,
// steered, with no turn of its own (t nil, ans its answer). A prompt of
// the owner's whose whole text is one of the owner's commands is done,
// not sent to the model (commands.go), the same way. Else it holds the
// conversation's lease and returns the turn begun, noted running for
// Cancel from before its message is stored.
func (h *Harness) steerOrBegin(ctx context.Context, p acp.Prompt, s acp.Stream) (t *turn, ans acp.Outcome, err error) {
	once, err := messageOnce(p) // once.go
	if err != nil {
		return nil, acp.Outcome{}, err
	}
	c, cmd, err := h.prepare(ctx, p, once)
	if err != nil {
		return nil, acp.Outcome{}, err
	}
	if cmd != nil {
		ans, err := h.command(ctx, c, cmd, s) // commands.go
		return nil, ans, err
	}
	msg := messageEvent(p, h.cfg.Now(), h.cfg.Location)
	if once != nil {
		msg.MessageID = once.ID
	}
	if err := h.waitSummarized(ctx, c); err != nil { // window_after.go
		return nil, acp.Outcome{}, err
	}
	t = h.newTurn(c, h.holder())
	err = t.take(ctx) // turn_lease.go
	if errors.Is(err, store.ErrLeaseHeld) {
		return h.steer(ctx, c, msg, s, once)
	}
	if err != nil {
		return nil, acp.Outcome{}, fmt.Errorf("take the lease of %s: %w", c.thread, err)
	}
	holder := t.holder
	t.answerFirst = true
	h.running(t) // until Prompt returns
	if err := t.store(ctx, msg, once); err != nil {
		h.ran(t)
		c.release(context.WithoutCancel(ctx), holder)
		return nil, acp.Outcome{}, err
	}
	s.Taken(ctx)
	t.out = answerFor(ctx, s, h.cfg.MaxAnswer, c.settings.Verbose, once) // once.go
	return t, acp.Outcome{}, nil
}

// steer stores msg, which came while a turn of c runs, as steered, so
// that turn answers it, then takes the lease once more: held still, the
// turn holding it lets it go only after the message was stored, and
// reads the conversation once it has, so it answers the message (letGo);
// its caller is answered steered, and, in a link: thread, the answer that
// answers it is kept for it here (cover). Free, the turn let it go before
// the message was stored, maybe after its last look: the message gets a
// turn of its own, t, streamed to its caller as any other, unless a turn
// answered it meanwhile. A message sent once whose id c holds already is
// refused, nothing stored (once.go).
func (h *Harness) steer(ctx context.Context, c *conv, msg store.Event, s acp.Stream, once *contract.MessageOnce) (t *turn, ans acp.Outcome, err error) {
	msg.Steered = true
	ev, err := h.appendMessage(ctx, c, msg, once) // once.go
	if err != nil {
		return nil, acp.Outcome{}, err
	}
	t = h.newTurn(c, h.holder())
	holder := t.holder
	if err := t.take(ctx); err == nil {
		t.answerFirst = true
		h.running(t)
		if err = t.refresh(ctx); err == nil && waiting(t.events) {
			if err = c.pinned.Begun(); err == nil {
				t.start, t.current = ev.Seq, true
				s.Taken(ctx)
				t.out = answerFor(ctx, s, h.cfg.MaxAnswer, c.settings.Verbose, once)
				return t, acp.Outcome{}, nil
			}
		}
		h.ran(t)
		c.release(context.WithoutCancel(ctx), holder)
		if err != nil {
			return nil, acp.Outcome{}, err
		}
	} else if !errors.Is(err, store.ErrLeaseHeld) {
		return nil, acp.Outcome{}, fmt.Errorf("take the lease of %s: %w", c.thread, err)
	}
	if isLink(c.thread) {
		h.coverAsync(c, ev.Seq)
	}
	// Answered at once: acp says _link/taken with the answer, in one write.
	return nil, acp.Outcome{StopReason: acp.StopEndTurn, Steered: true}, nil
}

// prepare opens the prompt's conversation and does what a prompt asks of
// it before its message: the connection's Link-Tools narrow it as its
// message's list does, kept with it the same way (with neither, the tools
// kept are read once, so a tools.json that doesn't read refuses the
// message before it is written), and a model the message names is set.
// cmd is the owner's command the prompt is, nil for a message. A message
// sent once whose id the conversation holds already is refused first,
// nothing of it kept (once.go).
func (h *Harness) prepare(ctx context.Context, p acp.Prompt, once *contract.MessageOnce) (*conv, *command, error) {
	c, err := h.open(ctx, p.Agent, p.Thread)
	if err != nil {
		return nil, nil, err
	}
	if err := h.checkReceived(ctx, c, once); err != nil {
		return nil, nil, err
	}
	cmd, err := h.ownerCommand(c, p)
	if err != nil {
		return nil, nil, err
	}
	// The model the message names or aliases is kept as a model_set event
	// from its sender, after the tools it narrows to. A name no provider
	// serves is refused before anything is kept, the tools too.
	var modelSet store.Event
	if p.Link.Model != "" {
		name, provider, err := h.resolveModel(c, p.Link.Model)
		if err != nil {
			return nil, nil, err
		}
		modelSet = store.Event{Kind: store.KindModelSet, Model: name, Provider: provider, From: p.Link.From}
	}
	if p.Link.Tools == nil && p.Tools == nil {
		if _, err := c.readTools(ctx); err != nil { // tools_narrowed.go
			return nil, nil, err
		}
	}
	for _, list := range []*[]string{p.Link.Tools, p.Tools} {
		if list == nil {
			continue
		}
		if _, err := c.narrowTools(ctx, list); err != nil {
			return nil, nil, err
		}
	}
	if modelSet.Kind != "" {
		if _, err := h.append(ctx, c, modelSet); err != nil {
			return nil, nil, err
		}
	}
	return c, cmd, nil
}

// isLink says whether thread is lnk agent chat send's.
func isLink(thread string) bool { return strings.HasPrefix(thread, "link:") }
