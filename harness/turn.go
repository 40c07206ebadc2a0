package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// turn is one turn of one conversation, run under its lease.
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
	// tools sysKey names (system.go); nil: compose it at the next round.
	sys    []model.Section
	sysKey string
}

// offered is what a round offers the model of the agent's tools: the
// conversation's narrowing and the tools it leaves, read once a round.
type offered struct {
	narrowed *[]string
	tools    []model.Tool
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

// finished is how a turn ended: its last answer's event and why.
type finished struct {
	seq  int64
	stop string
}

// errCapped ends a model's stream at the bridge's limit.
var errCapped = errors.New("answer at the bridge's limit")

// run runs the turn to its end under its lease, renewed while it runs:
// rounds of the model and its calls until an answer makes none and no
// message waits. It lets the lease go, looks once more for a message that
// joined as it did, and takes the lease again to answer it if one did.
func (t *turn) run(ctx context.Context) (finished, error) {
	for {
		f, err := t.held(ctx)
		if err == nil {
			t.addCopy(ctx)
			if next, ok := t.compactDue(); ok { // window_turn.go
				if t.answerFirst {
					t.summaryDue = &next
					return f, nil // its lease held: summarized once its caller has the answer (afterAnswer)
				}
				stop := t.renew(ctx)
				t.compact(ctx, next)
				stop()
			}
		}
		again, err := t.letGo(ctx, err)
		if !again {
			return f, err
		}
	}
}

// letGo lets the turn's lease go (err, when not nil, is the turn's, and
// is returned), then looks once more for a message that joined as it
// went, and takes the lease again to answer it if one did: again says
// it was taken.
func (t *turn) letGo(ctx context.Context, err error) (again bool, _ error) {
	if rerr := t.c.release(context.WithoutCancel(ctx), t.holder); rerr != nil && err == nil {
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

// renew renews the lease every third of its time, timed by
// Config.AfterFunc, until stop is called.
func (t *turn) renew(ctx context.Context) (stop func()) {
	every := t.with.leaseTTL / 3
	var (
		mu      sync.Mutex // held through a renewal, so stop waits for one running
		stopped bool
		disarm  func() bool
		tick    func()
	)
	tick = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || ctx.Err() != nil {
			return
		}
		if _, err := t.c.keeper().Lease(ctx, t.c.thread, t.holder, t.with.leaseTTL); err != nil {
			t.with.log.LogAttrs(ctx, slog.LevelWarn, "renew a turn's lease", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		}
		disarm = t.with.clock.afterFunc(every, tick)
	}
	mu.Lock()
	defer mu.Unlock()
	disarm = t.with.clock.afterFunc(every, tick)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		disarm()
	}
}

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
	system, err := t.system(ctx, name, t.tools.tools) // system.go
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
			return nil
		}
		sent, cut := t.out.chunk(d.Text)
		streamed = append(streamed, sent...)
		if cut {
			capped = true
			return errCapped
		}
		return nil
	})
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
	var tell appendHook
	if len(ev.Calls) == 0 {
		tell = t.hold(ctx) // the answer that ends the turn, held as it's stored
	}
	ev, err := t.with.store.append(ctx, t.c, ev, tell)
	return ev, r.capped, err
}

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
	sent, capped := t.out.chunk(text)
	if capped {
		text = sent + cutNote
	}
	ev, err := t.with.store.append(ctx, t.c, store.Event{Kind: store.KindFailure, Text: text, Seen: t.lastSeq()}, t.hold(ctx))
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
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Kind == store.KindModelSet && e.Model != "" {
			return t.c.settings.Alias(e.Model)
		}
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

// waiting says whether the conversation's last message is still to be
// answered: no answer that makes no call came after it having seen it
// (an answer written after a message that joined while the model
// answered didn't see it).
func waiting(events []store.Event) bool {
	last := -1
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == store.KindMessage {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	return answerOf(events[last+1:], events[last].Seq) < 0
}

// roundsSince counts the rounds of calls made since the message start
// that began the turn (0: every round): 0 for a new turn, more for one a
// crash cut short.
func roundsSince(events []store.Event, start int64) int {
	n := 0
	for i := len(events) - 1; i >= 0 && events[i].Seq > start; i-- {
		if e := events[i]; e.Kind == store.KindAnswer && len(e.Calls) > 0 {
			n++
		}
	}
	return n
}
