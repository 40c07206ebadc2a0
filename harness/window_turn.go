package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/facts"
	"github.com/lnk-dev/link/store"
)

// ModelFacts says what is known of a model: its window and its longest
// answer, and where each came from (facts.Resolver).
type ModelFacts interface {
	Resolve(ctx context.Context, name string) (facts.Facts, error)
}

// sized is a round's window as planned: the window sent, the
// conversation's room in it, and the answer's share.
type sized struct {
	size, room, answer int
	instructions       int // the instructions' and tools' rough tokens
}

// size works out the window of a round of model name, whose instructions
// and tools are system and tools: the spec's [window] settings over what
// is known of the model.
func (t *turn) size(ctx context.Context, name string, system []model.Section, tools []model.Tool) sized {
	set := t.c.settings.Window
	f, err := t.with.model.facts.Resolve(ctx, name)
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelDebug, "model facts", slog.String("model", name), slog.String("err", err.Error()))
	}
	if f.WindowFrom == facts.FromUnknown && set.Unknown > 0 {
		f.Window = set.Unknown
	}
	size := set.Size(f.Window)
	answer := set.AnswerTokens(size, t.c.settings.MaxTokens, f.Answer)
	instructions := 0
	for _, s := range system {
		instructions += window.Tokens(s.Text)
	}
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		instructions += window.Tokens(string(b))
	}
	return sized{size: size, room: set.Room(size, answer, instructions), answer: answer, instructions: instructions}
}

// readWindow reads the conversation from its window's start: its latest
// events first, backwards, for the latest checkpoint among them (further
// back when none is), then from that checkpoint's start, never the whole
// conversation unless its window starts at its first event.
func (r *reader) readWindow(ctx context.Context) ([]store.Event, error) {
	conv := r.c.reader()
	for look := window.Look; ; look *= 4 {
		latest, err := store.Latest(ctx, conv, r.c.thread, look)
		if err != nil || len(latest) == 0 {
			return nil, err
		}
		cp, ok := window.Latest(latest)
		if !ok && len(latest) >= look {
			continue
		}
		if !ok {
			cp = store.Checkpoint{Start: latest[0].Seq} // a conversation not from 1 (forked): from what there is
		}
		r.cp = cp
		if first := latest[0].Seq; first <= cp.Start {
			return latest[cp.Start-first:], nil
		}
		return conv.Read(ctx, r.c.thread, cp.Start)
	}
}

// noteCheckpoint takes the latest checkpoint events record, if any.
func (r *reader) noteCheckpoint(events []store.Event) {
	for i := len(events) - 1; i >= 0; i-- {
		if w := events[i].Window; w != nil {
			r.cp = *w
			return
		}
	}
}

// request makes a round's request from the conversation's window: when
// what it holds has outgrown its room, the window moves on to the drop
// point where it fits, and, unless the spec says never, what leaves is
// summarized first. The checkpoint sent is t.sent, recorded by the answer.
func (t *turn) request(ctx context.Context, name string, route model.Route, prov model.Provider, system []model.Section, tools []model.Tool, choice model.ToolChoice, takes func(model.Modality) bool) model.Request {
	set := t.c.settings.Window
	sz := t.size(ctx, name, system, tools)
	t.room, t.windowSize, t.instructions = sz.room, sz.size, sz.instructions
	v := t.view(t.cp) // window_view.go
	if v.tokens() > sz.room {
		reserve := 0
		if !set.Never {
			reserve = summaryTokens(sz.room)
		}
		if next, moved := window.Fit(t.events, t.cp, sz.room, reserve); moved {
			if !set.Never {
				if err := t.summarize(ctx, prov, route, system, tools, takes, t.cp, next); err != nil {
					t.with.log.LogAttrs(ctx, slog.LevelWarn, "summarize what leaves the window", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
				}
				if t.sys == nil { // a note saved while summarizing: the prompt changes from the notes section on
					if s, err := t.system(ctx, name, tools); err == nil {
						system = s
					}
				}
			}
			t.cp = next
			v = t.view(next)
		}
	}
	t.sent = t.cp
	req := newRequest(t.keptMessages(v, len(tools) > 0, name, takes), route.APIModel, system, tools, choice, t.c.settings.MaxTokens)
	t.sentTokens = v.tokens()
	return req
}

// summaryTokens is the most of room a summary takes.
func summaryTokens(room int) int { return max(room/8, 64) }

// errNothingFits: what leaves a window past its room is one event larger
// than the room a summary of it may read, so it leaves unsummarized.
var errNothingFits = errors.New("nothing of what leaves fits the room a summary reads")

// errSummaryCut: the summary reached its bound, so it isn't kept.
var errSummaryCut = errors.New("the summary was cut short")

// summaryNeeded says whether the window the turn answered with, its answer
// now in it, fills enough of its room to be summarized at its next drop
// point; the window must have one.
func (t *turn) summaryNeeded() (store.Checkpoint, bool) {
	set := t.c.settings.Window
	if t.last == nil || set.Never || t.room <= 0 {
		return store.Checkpoint{}, false
	}
	if !set.Due(t.view(t.cp).tokens(), t.room) {
		return store.Checkpoint{}, false
	}
	return window.Next(t.events, t.cp, t.room)
}

// summarizeAfter summarizes, after the turn's answer, what leaves the window at
// its next drop point: as a continuation of the request the answer
// answered, so the provider's cache holds for all of it. A summary that
// fails leaves the window where it was, for the next turn to try again.
func (t *turn) summarizeAfter(ctx context.Context, next store.Checkpoint) {
	last := *t.last
	final := t.events[len(t.events)-1]
	if final.Kind != store.KindAnswer {
		return
	}
	ans := messages([]store.Event{final}, len(last.Tools) > 0)
	cont := last
	cont.Messages = append(append([]model.Message(nil), last.Messages...), ans...)
	cont.ToolChoice = model.ToolAuto
	err := t.ask(ctx, t.prov, t.route, cont, window.Of(t.events, t.cp).Events, t.cp, next)
	if err != nil {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "summarize the window", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		return
	}
	t.cp = next
}

// summarize summarizes, before answering, what leaves a window past its
// room as it moves from from to to: at most the room's budget of it,
// newest first, after the instructions and tools every round sends.
func (t *turn) summarize(ctx context.Context, prov model.Provider, route model.Route, system []model.Section, tools []model.Tool, takes func(model.Modality) bool, from, to store.Checkpoint) error {
	budget := max(t.room-summaryTokens(t.room)-window.Tokens(window.Ask("", true, 0))-64, 1)
	sum, leaving := window.Leaving(t.events, from, to, budget)
	events := leaving
	if sum != nil {
		events = append([]store.Event{*sum}, leaving...)
	}
	if len(events) == 0 {
		return errNothingFits
	}
	req := buildRequest(events, route.APIModel, system, tools, model.ToolAuto, t.c.settings.MaxTokens, takes)
	return t.ask(ctx, prov, route, req, window.Of(t.events, from).Events, from, to)
}

// ask asks for the summary of what leaves the window as it moves to
// next, after req, and writes it: the harness's words, quoting the first
// message that stays; with notes to save (the spec's save_notes, the
// owner having spoken among seen, and memory__remember offered), the
// model's memory__remember calls are made and kept with the summary, and
// any other call is refused. A summary that fails or is cut short writes
// nothing.
func (t *turn) ask(ctx context.Context, prov model.Provider, route model.Route, req model.Request, seen []store.Event, from, next store.Checkpoint) error {
	notes := t.c.settings.Window.SaveNotes && window.Owner(seen) && offers(req.Tools, rememberCall)
	first := ""
	for _, e := range t.events {
		if e.Seq >= next.Start && (e.Kind == store.KindMessage || e.Kind == store.KindAnswer) && e.Text != "" {
			first = e.Text
			break
		}
	}
	words := summaryTokens(t.room) * 3 / 4
	req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{model.Text(window.Ask(first, notes, words))}})
	if t.with.model.onCall != nil {
		t.with.model.onCall(t.c.agent, t.c.thread, req)
	}
	var kept []store.ToolCall
	var resp model.Response
	var err error
	for round := 0; ; round++ {
		resp, err = prov.Stream(ctx, req, func(model.Delta) error { return nil })
		if err != nil {
			return fmt.Errorf("ask for a summary: %w", err)
		}
		if resp.StopReason == model.StopMaxTokens {
			return errSummaryCut
		}
		if len(resp.Calls) == 0 || round >= t.with.maxRounds {
			break
		}
		var uses, results []model.Part
		for _, th := range resp.Thinking {
			uses = append(uses, model.ThinkingPart(th))
		}
		if resp.Text != "" {
			uses = append(uses, model.Text(resp.Text))
		}
		for _, c := range resp.Calls {
			uses = append(uses, model.ToolUse(c.ID, c.Name, c.Input))
			if !notes || c.Name != rememberCall {
				results = append(results, model.ToolResult(c.ID, "Only "+rememberCall+" may be called while the conversation is summarized.", true))
				continue
			}
			text, isErr := t.with.tools.Call(ctx, t.c.agent, c, t.callMeta())
			results = append(results, model.ToolResult(c.ID, text, isErr))
			kept = append(kept, store.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input})
			t.recompose() // the notes changed: the next request's prompt is composed again
		}
		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Parts: uses}, model.Message{Role: model.RoleUser, Parts: results})
		if t.with.model.onCall != nil {
			t.with.model.onCall(t.c.agent, t.c.thread, req)
		}
	}
	if resp.Text == "" {
		return errors.New("ask for a summary: the model wrote none")
	}
	cp := next
	ev := answerEvent(resp, t.modelName(), route.Provider)
	ev.Kind, ev.Calls, ev.ResponseID, ev.Thinking = store.KindSummary, kept, "", nil
	ev.Covers = &store.Range{From: 1, To: next.Start - 1}
	ev.Window = &cp
	ev, err = t.with.store.append(ctx, t.c, ev)
	if err == nil {
		t.follows(ev)
	}
	return err
}

// rememberCall is the call by which the model saves a note.
const rememberCall = "memory__remember"

// offers says whether tools offers the call named.
func offers(tools []model.Tool, name string) bool {
	for _, tl := range tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// tooLong tells a provider's refusal of the prompt as longer than the
// model's window as that: the window sent and the setting that changes
// it; any other error is as it was.
func (t *turn) tooLong(err error, name string) error {
	if !errors.Is(err, model.ErrPromptTooLong) {
		return err
	}
	sz := t.size(context.Background(), name, nil, nil)
	return fmt.Errorf("the provider refused the prompt as too long for %s (%w). Link Harness sent a window of %d tokens, about %d of them the conversation's, counted roughly; set a smaller one with the agent's [window] max (config.json window.max), or the model's window in ~/.lnk/model-facts.toml (lnk model show %s)", name, err, sz.size, t.sentTokens, name)
}
