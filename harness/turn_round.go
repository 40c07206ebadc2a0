package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// errCapped ends a model's stream at the bridge's limit.
var errCapped = errors.New("answer at the bridge's limit")

// offer reads the tools the conversation was narrowed to and those of
// the agent's the round offers, once a round: its calls are made from
// what it offered.
func (t *turn) offer(ctx context.Context) error {
	narrowed, err := t.c.readTools(ctx) // tools_narrowed.go
	if err != nil {
		return err
	}
	tools, err := t.with.tools.Offer(ctx, t.c.agent, narrowed)
	if err != nil {
		return fmt.Errorf("list the tools of %s: %w", t.c.agent, err)
	}
	t.tools = offered{narrowed: narrowed, tools: tools}
	return nil
}

// failed ends the turn saying why the model couldn't answer: streamed
// as its answer, and stored as a failure, the turn's end, so the message
// isn't taken for one a crash left unanswered; the prompt leaves it out,
// so the next turn answers the message too.
func (t *turn) failed(ctx context.Context, cause error) (store.Event, bool, error) {
	if ctx.Err() != nil {
		return store.Event{}, false, ctx.Err()
	}
	text := "[The model couldn't answer: " + cause.Error() + "]"
	t.out.startRound()
	sent, capped := t.out.chunk(text, false)
	if capped {
		text = sent + cutNote
	}
	ev, err := t.with.store.appendAnswer(ctx, t.c, store.Event{Kind: store.KindFailure, Text: text, Seen: t.lastSeq()}, t.events, t.hold(ctx))
	return ev, capped, err
}

// answerEvent is the event a model's answer is stored as, with what the
// provider said of the call.
func answerEvent(resp model.Response, name, provider string) store.Event {
	e := store.Event{
		Kind:       store.KindAnswer,
		Text:       resp.Text,
		Calls:      storeCalls(resp.Calls),
		Model:      resp.Model,
		Provider:   resp.Provider,
		ResponseID: resp.ID,
		LatencyMS:  resp.Latency.Milliseconds(),
		CostUSD:    resp.CostUSD,
	}
	if e.Model == "" {
		e.Model = name
	}
	if e.Provider == "" {
		e.Provider = provider
	}
	if u := resp.Usage; u != (model.Usage{}) {
		e.Usage = &store.Usage{In: u.In, Out: u.Out, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	for _, th := range resp.Thinking {
		e.Thinking = append(e.Thinking, store.Thinking{Text: th.Text, Signature: th.Signature, Redacted: th.Redacted})
	}
	return e
}

// modelName is the conversation's model: the last one a message set,
// else the settings'.
func (t *turn) modelName() string {
	if m, _ := t.lastSet(); m != nil {
		return t.c.settings.Alias(m.Model)
	}
	if t.cp.Model != "" { // set before the window's start
		return t.c.settings.Alias(t.cp.Model)
	}
	return t.c.settings.Alias(t.c.settings.Model)
}

// hops is the hops of the message the turn answers: its latest.
func (t *turn) hops() int {
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Kind == store.KindMessage {
			return e.Hops
		}
	}
	return 0
}

// endTools ends what the turn opened of the agent's tools that isn't
// kept between turns: this conversation's alone when the tools keep each
// conversation's apart (ThreadEnder), so another conversation's turn
// running meanwhile keeps its own.
func (t *turn) endTools(ctx context.Context) {
	if te, ok := t.with.tools.(ThreadEnder); ok {
		te.EndThreadTurn(ctx, t.c.agent, t.c.thread)
		return
	}
	t.with.tools.EndTurn(ctx, t.c.agent)
}
