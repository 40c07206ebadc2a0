package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/store"
)

// Prompt answers one prompt of agent p.Agent: it narrows the
// conversation's tools, sets its model if the message says one, stores
// the message with its header, tells _link/taken, and runs the turn,
// streaming its answer. A message that comes while a turn of its
// conversation runs (here or in another process) joins that turn: it is
// stored as steered and answered at once, steered. The turn runs on the
// harness's own life, not the caller's: a caller gone leaves it running,
// and its answer is kept for _link/recover. An answer to a caller still
// there is held, from just before its event is stored, until Serve has
// written the response (acp.Answer.Delivered lets it go), so a kill in
// between loses nothing (store/delivery). A prompt of the owner's whose whole text is one of the
// owner's commands is done, not sent to the model (commands.go).
func (h *Harness) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Answer, error) {
	if !h.begin() {
		return acp.Answer{}, ErrClosing
	}
	defer h.end()
	c, err := h.open(ctx, p.Agent, p.Thread)
	if err != nil {
		return acp.Answer{}, err
	}
	cmd, err := h.ownerCommand(c, p) // nil for a message
	if err != nil {
		return acp.Answer{}, err
	}
	// The connection's Link-Tools narrow the conversation as its message's
	// list does, and are kept with it the same way. With neither, the
	// tools kept are read once, so a tools.json that doesn't read refuses
	// the message before it is written.
	if p.Link.Tools == nil && p.Tools == nil {
		if _, err := c.readTools(ctx); err != nil { // tools_keep.go
			return acp.Answer{}, err
		}
	}
	for _, said := range []*[]string{p.Link.Tools, p.Tools} {
		if said == nil {
			continue
		}
		if _, err := c.narrowTools(ctx, said); err != nil {
			return acp.Answer{}, err
		}
	}
	if p.Link.Model != "" {
		if err := h.setModel(ctx, c, p.Link.Model, p.Link.From); err != nil {
			return acp.Answer{}, err
		}
	}
	if cmd != nil {
		return h.command(ctx, c, cmd, s) // commands.go
	}
	msg := messageEvent(p, h.cfg.Now(), h.cfg.Location)
	holder := h.holder()
	err = c.lease(ctx, holder, h.cfg.LeaseTTL)
	if errors.Is(err, store.ErrLeaseHeld) {
		// A turn runs: the message joins it, and that turn's answer
		// answers it (kept for it, in a link: thread, the running turn
		// sees to that).
		msg.Steered = true
		if _, err := h.append(ctx, c, msg); err != nil {
			return acp.Answer{}, err
		}
		s.Taken(ctx)
		return acp.Answer{StopReason: acp.StopEndTurn, Steered: true}, nil
	}
	if err != nil {
		return acp.Answer{}, fmt.Errorf("take the lease of %s: %w", c.thread, err)
	}
	// The conversation is read first, under the lease, so the message
	// takes the number after its last event without asking, and the
	// turn's first round needn't read again.
	t := h.newTurn(c, holder)
	defer h.running(t)() // for Cancel to reach (cancel.go)
	t.resume()
	err = t.refresh(ctx)
	var ev store.Event
	if err == nil {
		ev, err = h.append(ctx, c, msg)
	}
	if err == nil {
		err = c.pin() // begun now, if it wasn't
	}
	if err != nil {
		c.release(context.WithoutCancel(ctx), holder)
		return acp.Answer{}, err
	}
	t.start = ev.Seq
	t.current = t.follows(ev)
	s.Taken(ctx)

	// From here the turn is the harness's: it runs to its end whatever
	// the caller does.
	tctx, cancel := context.WithCancel(h.life)
	defer cancel()
	t.out = newAnswer(ctx, s, h.cfg.MaxAnswer, c.settings.Verbose)
	out := t.out
	final, err := t.run(tctx)
	if err != nil {
		h.cfg.Logger.LogAttrs(tctx, slog.LevelWarn, "turn failed", slog.String("agent", c.agent), slog.String("thread", c.thread), slog.String("err", err.Error()))
		t.delivery.Failed()
		if !out.callerGone() {
			return acp.Answer{}, err
		}
		return acp.Answer{StopReason: acp.StopEndTurn}, nil
	}
	delivered, err := t.delivery.End(tctx, out.Text(), final.seq, out.callerGone(), t.joinedLink)
	if err != nil {
		h.cfg.Logger.LogAttrs(tctx, slog.LevelWarn, "keep an answer", slog.String("agent", c.agent), slog.String("thread", c.thread), slog.String("err", err.Error()))
	}
	t.keepEvents()
	return acp.Answer{StopReason: final.stop, Delivered: delivered}, nil
}

// setModel keeps the conversation's model, named or aliased by the
// message, as a model_set event from its sender. A name no provider
// serves is refused before anything is stored.
func (h *Harness) setModel(ctx context.Context, c *conv, said, from string) error {
	name, provider, err := h.resolveModel(c, said)
	if err != nil {
		return err
	}
	_, err = h.append(ctx, c, store.Event{Kind: store.KindModelSet, Model: name, Provider: provider, From: from})
	return err
}

// hold is the append hook (appendHook) of an answer that ends a round
// without calls: it holds the answer streamed so far while a caller waits
// to be sent it (delivery.Turn.Hook); nil when none does.
func (t *turn) hold(ctx context.Context) appendHook {
	if t.out == nil || t.out.callerGone() {
		return nil
	}
	return t.delivery.Hook(ctx, t.out.Text())
}

// isLink says whether thread is lnk agent chat send's.
func isLink(thread string) bool { return strings.HasPrefix(thread, "link:") }
