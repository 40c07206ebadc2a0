package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// turn is one turn of one conversation, run under its lease. This file
// reads it in the order it runs:
//
//  1. take the message (store), stored under the lease;
//  2. compose the prompt (system), once a hold of the lease;
//  3. ask the model (round), streaming its answer to the caller;
//  4. make the calls it asks for (call), then ask it again;
//  5. deliver the answer (deliver) once a round makes no call;
//  6. the window after (Harness.afterAnswer): what leaves the window
//     summarized once the caller has its answer.
//
// run and held loop over 2 to 4 and let the lease go. What the turn
// works with it is given (collaborators); the parts of a round are in
// turn_round.go, the window's in window_turn.go, a cancel's in cancel.go.
type turn struct {
	reader // its conversation's events, as read so far

	with     *collaborators // what it works with: store, model, tools, clock, logger
	c        *conv
	holder   string
	out      *answer
	delivery *delivery.Turn // the answer's way to its caller
	end      ending         // how Cancel asks it to end (cancel.go)
	tools    offered        // the tools offered this round

	// The window (window_turn.go): sent is the checkpoint its last
	// request was made with, sentTokens that request's conversation's
	// rough tokens and room its room; last is the request itself and prov
	// and route where it went, for the summary that continues it.
	sent       store.Checkpoint
	sentTokens int
	room       int
	last       *model.Request
	prov       model.Provider
	route      model.Route
	// What an editor is told of the window (report, sessions.go): its
	// size and its instructions' and tools' rough tokens as last planned,
	// the provider's count of the last answer, what the answers cost.
	windowSize, instructions int
	lastUsage                model.Usage
	cost                     float64 // USD
	// answerFirst: the turn's caller waits, so a summary due after its
	// answer is left, its lease held, until the caller has it (summaryDue).
	answerFirst bool
	summaryDue  *store.Checkpoint

	// sys is the system prompt as last composed, for the model and the
	// tools sysKey names (system); nil: compose it at the next round.
	sys    []model.Section
	sysKey string
}

// offered is what a round offers the model of the agent's tools: the
// conversation's narrowing and the tools it leaves, read once a round.
type offered struct {
	narrowed *[]string
	tools    []model.Tool
}

// finished is how a turn ended: its last answer's event and why.
type finished struct {
	seq  int64
	stop string
}

// collaborators is what a turn works with, given it by the Harness that
// begins it (newTurn) rather than reached through it: the store its
// events are written to, the models it asks, the agent's tools, the
// prompt's composer, the clock, the logger and the limits it runs
// within. The answer's way to its caller (turn.delivery) is the turn's
// own, begun from its conversation's answers.
type collaborators struct {
	store     eventWriter      // the conversation's events, appended (Harness.append)
	model     models           // where a model's name goes, and what is known of it
	tools     Tools            // the agent's tools (Config.Tools)
	prompts   *prompt.Composer // the system prompt, from the agent's files
	clock     clock            // the time, timers, the machine's zone
	log       *slog.Logger     // what goes wrong outside the answer
	wakes     *wakes           // steered messages watched here, woken as a turn lets go
	leaseTTL  time.Duration    // how long a lease holds unrenewed
	maxRounds int              // rounds of calls before the model must answer
	maxAnswer int              // bytes of answer streamed to a caller
}

// eventWriter writes a conversation's events: numbered, timed and in
// order with the other writers of this process (Harness.append).
type eventWriter interface {
	append(ctx context.Context, c *conv, e store.Event, hook ...appendHook) (store.Event, error)
	appendMessage(ctx context.Context, c *conv, msg store.Event, once *contract.MessageOnce) (store.Event, error)
	appendAnswer(ctx context.Context, c *conv, e store.Event, events []store.Event, hook appendHook) (store.Event, error)
}

// models is where a turn's model calls go: the route and provider of a
// model's name, what is known of a model and what it takes beside text,
// and the hook told of each request (Config.OnCall).
type models struct {
	route    func(name string) (model.Route, error)
	provider func(model.Route) (model.Provider, error)
	facts    ModelFacts
	inputs   map[string]model.Inputs
	onCall   func(agent, thread string, req model.Request)
}

// clock is a turn's time: now, a timer (Config.AfterFunc) and the zone
// a message's time is given in.
type clock struct {
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) (stop func() bool)
	zone      *time.Location
}

// collaborators is what the harness's turns work with, of its Config.
func (h *Harness) collaborators() *collaborators {
	c := h.cfg
	return &collaborators{
		store:     h,
		model:     models{route: c.Route, provider: c.Provider, facts: c.Facts, inputs: c.Inputs, onCall: c.OnCall},
		tools:     c.Tools,
		prompts:   h.prompts,
		clock:     clock{now: c.Now, afterFunc: c.AfterFunc, zone: c.Location},
		log:       c.Logger,
		wakes:     &h.wakes,
		leaseTTL:  c.LeaseTTL,
		maxRounds: c.MaxRounds,
		maxAnswer: c.MaxAnswer,
	}
}

// newTurn is a turn of c under the lease holder holds.
func (h *Harness) newTurn(c *conv, holder string) *turn {
	return &turn{with: h.with, c: c, holder: holder, reader: reader{c: c, hist: h.hist}, delivery: c.answers.Begin(c.thread)}
}

// 1. Take the message.

// store stores the message that begins the turn, under its lease (take).
// The conversation is read first (with the lease, where the driver can),
// so the message takes the number after its last event without asking,
// and the turn's first round needn't read again. A message sent once (once not nil) whose id was stored
// meanwhile is refused, nothing stored.
func (t *turn) store(ctx context.Context, msg store.Event, once *contract.MessageOnce) error {
	if err := t.refresh(ctx); err != nil {
		return err
	}
	ev, err := t.with.store.appendMessage(ctx, t.c, msg, once)
	if err != nil {
		return err
	}
	if err := t.c.pinned.Begun(); err != nil { // begun now, if it wasn't
		return err
	}
	t.begun(ev)
	return nil
}

// The rounds, under the lease: compose the prompt, ask the model, make
// its calls, until an answer makes none and no message waits.

// run runs the turn to its end under its lease, renewed while it runs:
// rounds of the model and its calls until an answer makes none and no
// message waits. It lets the lease go, looks once more for a message that
// joined as it did, and takes the lease again to answer it if one did.
func (t *turn) run(ctx context.Context) (finished, error) {
	for {
		f, err := t.held(ctx)
		if err == nil {
			t.addCopy(ctx)
			if next, ok := t.summaryNeeded(); ok { // window_turn.go
				if t.answerFirst {
					t.summaryDue = &next
					return f, nil // its lease held: summarized once its caller has the answer (afterAnswer)
				}
				stop := t.renew(ctx)
				t.summarizeAfter(ctx, next)
				stop()
			}
		}
		again, err := t.letGo(ctx, err)
		if !again {
			return f, err
		}
	}
}

// held runs rounds while the lease is held, renewing it.
func (t *turn) held(ctx context.Context) (finished, error) {
	stop := t.renew(ctx)
	defer stop()
	defer t.endTools(context.WithoutCancel(ctx))
	t.recompose() // the turn's start: its files and settings read anew
	if err := t.readStale(ctx); err != nil {
		return finished{}, err
	}
	rounds := roundsSince(t.events, t.start)
	for {
		choice := model.ToolAuto
		if rounds >= t.with.maxRounds {
			choice = model.ToolNone
		}
		if t.endAsked(ctx) { // cancel.go
			return t.stopped(ctx, "")
		}
		ev, capped, err := t.round(ctx, choice)
		if cut, ok := err.(errStopped); ok {
			return t.stopped(ctx, cut.text)
		}
		if err != nil {
			return finished{}, err
		}
		if len(ev.Calls) > 0 {
			if err := t.call(ctx, ev.Calls); err != nil {
				return finished{}, err
			}
			rounds++
			if err := t.refresh(ctx); err != nil {
				return finished{}, err
			}
			continue
		}
		if capped {
			t.follows(ev) // for the copy, when nothing came between
			return finished{seq: ev.Seq, stop: acp.StopMaxTokens}, nil
		}
		// A message that joined after the last round is answered too, even
		// past the last round of calls. When the answer was written right
		// after the events read, nothing joined before it, and run looks
		// for what joined after it once the lease is let go.
		if t.follows(ev) {
			return finished{seq: ev.Seq, stop: acp.StopEndTurn}, nil
		}
		if err := t.refresh(ctx); err != nil {
			return finished{}, err
		}
		if waiting(t.events) {
			continue
		}
		return finished{seq: ev.Seq, stop: acp.StopEndTurn}, nil
	}
}

// letGo lets the turn's lease go (err, when not nil, is the turn's, and
// is returned), then looks once more for a message that joined as it
// went, and takes the lease again to answer it if one did: again says
// it was taken.
func (t *turn) letGo(ctx context.Context, err error) (again bool, _ error) {
	if rerr := t.release(context.WithoutCancel(ctx), err == nil); rerr != nil && err == nil {
		err = fmt.Errorf("let the lease of %s go: %w", t.c.thread, rerr)
	}
	t.with.wakes.wake(t.c.agent, t.c.thread) // a steered message watched here looks again (cover)
	if err != nil {
		return false, err
	}
	// A message that joined as the lease went saw the turn running and
	// was answered steered: it is this turn's to answer.
	if err := t.refresh(ctx); err != nil {
		return false, err
	}
	if !waiting(t.events) {
		return false, nil
	}
	if err := t.c.lease(ctx, t.holder, t.with.leaseTTL); err != nil {
		if errors.Is(err, store.ErrLeaseHeld) {
			return false, nil // another turn took it, and answers it
		}
		return false, err
	}
	return true, nil
}

// 2. Compose the prompt.

// system is the turn's system prompt for the model name with tools
// offered: composed from the agent's files and settings once for each
// hold of the lease (the turn's start), and again when the model or the
// tools offered differ (a fallback model is sent its own instructions),
// or after recompose (a note saved). Within a turn it is the same bytes
// round after round, so the provider's cache holds.
func (t *turn) system(ctx context.Context, name string, tools []model.Tool) ([]model.Section, error) {
	key := systemKey(name, tools)
	if t.sys != nil && t.sysKey == key {
		return t.sys, nil
	}
	var texts []model.ToolText
	if in, ok := t.with.tools.(Instructor); ok {
		texts = in.Instructions(t.c.agent, tools)
	}
	p, err := t.with.prompts.Compose(ctx, prompt.Turn{
		Agent: t.c.agent,
		Model: name,
		Tools: texts,
		Environment: prompt.Env{
			FilesFolder: t.c.paths.Files(),
			Connections: t.c.settings.Connections,
		},
		Zone:     t.with.clock.zone.String(),
		Settings: t.c.settings.Instructions,
	})
	if err != nil {
		return nil, err
	}
	for _, e := range p.Problems {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "left out of the prompt", slog.String("agent", t.c.agent), slog.String("err", e.Error()))
	}
	t.sys, t.sysKey = p.System(), key
	return t.sys, nil
}

// 3. Ask the model.

// round asks the model once and stores its answer: the text streams to
// the caller as it comes, up to the bridge's limit, where the answer is
// cut and the turn ends. With choice none, calls the model makes anyway
// are not kept. A model that fails before any of its answer streamed
// hands the round to the next of the settings' fallbacks (fallback.go).
func (t *turn) round(ctx context.Context, choice model.ToolChoice) (store.Event, bool, error) {
	first := t.modelName()
	if first == "" {
		return t.failed(ctx, errors.New("no model is set for this agent: set its model, or send one with the message"))
	}
	if err := t.offer(ctx); err != nil {
		return store.Event{}, false, err
	}
	names := t.models(first)
	for i := 0; ; i++ {
		r, err := t.try(ctx, names[i], choice)
		var mf modelFailed
		switch {
		case err == nil:
			return t.answered(ctx, r, choice)
		case !errors.As(err, &mf):
			return store.Event{}, false, err
		case i == len(names)-1 || !mf.fallsBack() || ctx.Err() != nil:
			return t.failed(ctx, mf.err)
		}
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "a model failed: its fallback asked", slog.String("thread", t.c.thread), slog.String("model", names[i]), slog.String("fallback", names[i+1]), slog.String("err", mf.err.Error()))
	}
}

// reply is one model's reply to a round's request.
type reply struct {
	resp   model.Response
	name   string
	route  model.Route
	req    model.Request
	seen   int64 // the last event read when it was asked
	capped bool
}

// try asks model name for the round's answer, its request made from the
// window with the model's own instructions, streaming the text as it
// comes. A failure of the model's is a modelFailed.
func (t *turn) try(ctx context.Context, name string, choice model.ToolChoice) (reply, error) {
	route, err := t.with.model.route(name)
	if err != nil {
		return reply{}, modelFailed{err: err}
	}
	prov, err := t.with.model.provider(route)
	if err != nil {
		return reply{}, modelFailed{err: err}
	}
	takes := func(m model.Modality) bool { return model.Takes(name, m, t.with.model.inputs) }
	system, err := t.system(ctx, name, t.tools.tools)
	if err != nil {
		return reply{}, err
	}
	t.prov, t.route = prov, route
	req := t.request(ctx, name, route, prov, system, t.tools.tools, choice, takes) // window_turn.go
	t.last = nil                                                                   // until the model has answered it
	seen := t.lastSeq()
	if t.with.model.onCall != nil {
		t.with.model.onCall(t.c.agent, t.c.thread, req)
	}
	t.out.startRound()
	var streamed []byte
	capped := false
	began := time.Now()
	sctx, streamDone := t.end.stream(ctx) // cut when the turn is asked to end
	resp, err := prov.Stream(sctx, req, func(d model.Delta) error {
		if d.Text == "" {
			if !d.More { // thinking: what a piece before it held goes now
				t.out.flush()
			}
			return nil
		}
		sent, cut := t.out.chunk(d.Text, d.More)
		streamed = append(streamed, sent...)
		if cut {
			capped = true
			return errCapped
		}
		return nil
	})
	t.out.flush() // what the model's last pieces left held, however it ended
	streamDone()
	switch {
	case capped:
		resp = model.Response{Text: string(streamed) + cutNote, Model: name, Provider: route.Provider, Latency: time.Since(began), StopReason: model.StopMaxTokens}
	case t.end.wasAsked():
		return reply{}, errStopped{string(streamed)}
	case err != nil:
		return reply{}, modelFailed{err: t.tooLong(err, name), streamed: len(streamed) > 0}
	}
	return reply{resp: resp, name: name, route: route, req: req, seen: seen, capped: capped}, nil
}

// answered stores a model's reply as the round's answer.
func (t *turn) answered(ctx context.Context, r reply, choice model.ToolChoice) (store.Event, bool, error) {
	if !r.capped {
		t.last = &r.req // what a summary after the answer continues
	}
	if choice == model.ToolNone {
		r.resp.Calls = nil
	}
	t.lastUsage, t.cost = r.resp.Usage, t.cost+r.resp.CostUSD
	ev := answerEvent(r.resp, r.name, r.route.Provider)
	ev.Seen = r.seen
	sent := t.sent
	ev.Window = &sent
	if len(ev.Calls) > 0 {
		ev, err := t.with.store.append(ctx, t.c, ev)
		return ev, r.capped, err
	}
	// The answer that ends the turn, held as it's stored, unless another
	// turn answered what it saw (fence.go).
	ev, err := t.with.store.appendAnswer(ctx, t.c, ev, t.events, t.hold(ctx))
	return ev, r.capped, err
}

// 4. Make the calls.

// call makes a round's calls, all at once. Each is streamed as a
// tool_call titled with the tool's name (the round's together, in one
// write), then its tool_call_update; each answer, kept up to 32 KiB, is
// an event of its own, written as it comes.
// A call to a tool the round didn't offer is answered as one there
// isn't, and never made.
func (t *turn) call(ctx context.Context, calls []store.ToolCall) error {
	names := make([]string, len(t.tools.tools))
	for i, o := range t.tools.tools {
		names[i] = o.Name
	}
	meta := t.callMeta()
	t.out.setActivity(t.verbose()) // the conversation's /chat:verbose, as of now
	errs := make([]error, len(calls))
	t.out.toolCalls(calls) // begun together: in one write
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var text string
			var failed bool
			if slices.Contains(names, c.Name) {
				text, failed = t.with.tools.Call(ctx, t.c.agent, model.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input}, meta)
			} else {
				text, failed = noSuchTool(c.Name), true
			}
			_, errs[i] = t.with.store.append(ctx, t.c, store.Event{Kind: store.KindToolResult, CallID: c.ID, Tool: c.Name, Text: capToolAnswer(text), IsError: failed})
			t.out.toolDone(c.ID, failed)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// 5. Deliver the answer.

// deliver ends a turn its caller asked for: a turn that failed fails the
// prompt, unless the caller went; else its answer goes on its way
// (delivery.Turn.End) and the prompt is answered with how the turn ended.
func (t *turn) deliver(ctx context.Context, final finished, err error) (acp.Outcome, error) {
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "turn failed", slog.String("agent", t.c.agent), slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		t.delivery.Failed()
		if !t.out.callerGone() {
			return acp.Outcome{}, err
		}
		return acp.Outcome{StopReason: acp.StopEndTurn}, nil
	}
	t.report(ctx) // sessions.go
	delivered := t.keepAnswer(ctx, final)
	if t.summaryDue == nil { // else kept after the summary (Harness.afterAnswer)
		t.keep(t.with.clock.now)
	}
	return acp.Outcome{StopReason: final.stop, Delivered: delivered}, nil
}

// keepAnswer ends the answer's part of the turn (delivery.Turn.End): kept
// for a caller gone, and for a caller there, what lets its hold go once
// it has the answer. A turn of a link: thread that answered only steered
// messages keeps nothing: each was told steered by a process that keeps
// it for its sender (cover), in its own home.
func (t *turn) keepAnswer(ctx context.Context, final finished) (delivered func()) {
	if t.steeredOnly && isLink(t.c.thread) {
		return nil
	}
	delivered, err := t.delivery.End(ctx, t.out.Text(), final.seq, t.out.callerGone(), false)
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "keep an answer", slog.String("agent", t.c.agent), slog.String("thread", t.c.thread), slog.String("err", err.Error()))
	}
	return delivered
}

// hold is the append hook (appendHook) of an answer that ends a round
// without calls: it holds the answer streamed so far from just before its
// event is stored until the caller is sent it or it is kept
// (delivery.Turn.Hook, End), for a caller there or gone alike: a turn
// killed between the event and the keep (one finished after a crash,
// whose caller left) leaves its answer held, for a recover to hand over
// (delivery.Answers.Settle). nil for an answer keepAnswer keeps nowhere.
func (t *turn) hold(ctx context.Context) appendHook {
	if t.out == nil || t.steeredOnly && isLink(t.c.thread) {
		return nil
	}
	return t.delivery.Hook(ctx, t.out.Text())
}

// 6. The window after: summarize what leaves it, once the caller has
// its answer.

// afterAnswer summarizes, once t's caller has its answer, what leaves
// the window at its next drop point (t.summaryDue), still under the
// turn's lease, renewed; then lets the lease go and answers, nobody
// waiting, a message another process wrote meanwhile (one that comes
// here waits for the lease to go, for a turn of its own: waitSummarized).
// A crash before the summary is written loses only the summary: the
// window stays where it was, and the next turn summarizes after its
// answer.
func (h *Harness) afterAnswer(t *turn) {
	next := *t.summaryDue
	t.summaryDue = nil
	k := turnKey(t.c.agent, t.c.thread)
	done := make(chan struct{})
	h.summarizing.Store(k, done)
	finish := func() {
		h.summarizing.CompareAndDelete(k, done)
		close(done)
	}
	if !h.begin() {
		t.c.release(context.WithoutCancel(h.life), t.holder)
		finish()
		return
	}
	go func() {
		defer h.end()
		ctx := h.life
		stop := t.renew(ctx)
		t.summarizeAfter(ctx, next)
		stop()
		t.answerFirst = false
		t.out = newAnswer(nil, nil, t.with.maxAnswer, nil) // its caller gone
		t.steeredOnly = true                               // its caller had its answer
		again, err := t.letGo(ctx, nil)
		finish()
		if err == nil && again {
			t.delivery = t.c.answers.Begin(t.c.thread)
			var f finished
			if f, err = t.run(ctx); err == nil {
				t.keepAnswer(ctx, f) // kept for _link/recover
			} else {
				t.delivery.Failed()
			}
		}
		if err != nil {
			t.with.log.LogAttrs(ctx, slog.LevelWarn, "after a summary", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		}
		t.keep(t.with.clock.now)
	}()
}
