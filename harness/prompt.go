package harness

import (
	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// BaseSection is Link's base section of the prompt, the first and the
// one that changes least (prompt.BaseText).
const BaseSection = prompt.BaseText

// unanswered is what the model is told of a call whose turn was cut short
// before the call was answered.
const unanswered = "Unanswered: the turn was cut short before this call was answered, so whether it ran is not known. It won't be made again unless you call it again."

// left heads a window that starts with the model's own answer, what came
// before it having left unsummarized, since a request starts with the
// user's message.
const left = "[The start of this conversation has left your window.]"

// buildRequest makes the request of a round: the system prompt, the
// window's events as messages (a summary first, when it starts with
// one), the tools offered and the choice. takes says which attachments
// the model takes; the rest are told in text.
func buildRequest(events []store.Event, apiModel string, system []model.Section, tools []model.Tool, choice model.ToolChoice, maxTokens int, takes func(model.Modality) bool) model.Request {
	return newRequest(sendable(messages(events, len(tools) > 0), takes), apiModel, system, tools, choice, maxTokens)
}

// sendable is a window's messages as sent: headed by a user's message
// when the first is the model's (left), each attachment the model
// doesn't take told in text (model.Substitute).
func sendable(msgs []model.Message, takes func(model.Modality) bool) []model.Message {
	if len(msgs) > 0 && msgs[0].Role != model.RoleUser {
		msgs = append([]model.Message{{Role: model.RoleUser, Parts: []model.Part{model.Text(left)}}}, msgs...)
	}
	return model.Substitute(msgs, takes)
}

// newRequest is a round's request of msgs, the window's messages as
// sent.
func newRequest(msgs []model.Message, apiModel string, system []model.Section, tools []model.Tool, choice model.ToolChoice, maxTokens int) model.Request {
	return model.Request{
		Model:      apiModel,
		System:     system,
		Messages:   msgs,
		Tools:      tools,
		ToolChoice: choice,
		MaxTokens:  maxTokens,
	}
}

// messages renders a conversation's events as the model's messages,
// oldest first, each role's neighbours merged. An answer's calls are
// answered first thing in the next user message, in the calls' order,
// wherever their results were written (a message that joined the turn
// may have come between); a call without a result is answered as
// unanswered. With no tools offered, calls and their answers go as text.
func messages(events []store.Event, withTools bool) []model.Message {
	w := writer{out: make([]model.Message, 0, len(events)), withTools: withTools, summaries: true, results: callResults{recent: resultsOf(events)}}
	w.events(events)
	return w.out
}

// writer renders events as the model's messages (messages), appending to
// out, each role's neighbours merged, out's last message with them.
type writer struct {
	out       []model.Message
	withTools bool
	// summaries: a summary among the events is rendered where it is;
	// else only the one the window starts with is (summary), and the
	// others, the model doesn't see, are passed over.
	summaries bool
	results   callResults
}

// add appends parts in role's message: the last one, when it is role's.
func (w *writer) add(role model.Role, parts ...model.Part) {
	if len(parts) == 0 {
		return
	}
	if n := len(w.out); n > 0 && w.out[n-1].Role == role {
		w.out[n-1].Parts = append(w.out[n-1].Parts, parts...)
		return
	}
	w.out = append(w.out, model.Message{Role: role, Parts: parts})
}

// summary renders e, the summary a window starts with.
func (w *writer) summary(e *store.Event) {
	w.add(model.RoleUser, model.Text(window.SummaryHead+e.Text))
}

// events renders events in order, a message that joined a turn after
// the answer it joined (joinedAfter); a tool's answer, with the call it
// answers.
func (w *writer) events(events []store.Event) {
	after, held := joinedAfter(events)
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case store.KindMessage:
			if !held[e.Seq] {
				w.add(model.RoleUser, messageParts(e)...)
			}
		case store.KindAnswer:
			parts, answers := answerParts(e, w.results, w.withTools)
			w.add(model.RoleAssistant, parts...)
			w.add(model.RoleUser, answers...)
			for _, m := range after[e.Seq] {
				w.add(model.RoleUser, messageParts(m)...)
			}
		case store.KindSummary:
			if w.summaries {
				w.summary(e)
			}
		}
	}
}

// callResult is what a call's first result said: its text, whether it
// is an error, and its event's number.
type callResult struct {
	seq   int64
	text  string
	isErr bool
}

// callResults are the first results of calls by the call's id: those of
// settled events first, then of recent ones; either may be nil.
type callResults struct{ settled, recent map[string]callResult }

// of is the first result of the call id.
func (rs callResults) of(id string) (callResult, bool) {
	if r, ok := rs.settled[id]; ok {
		return r, true
	}
	r, ok := rs.recent[id]
	return r, ok
}

// resultsOf is each call's first result among events, by the call's id;
// nil when there is none.
func resultsOf(events []store.Event) map[string]callResult {
	var results map[string]callResult // made at the first result
	for i := range events {
		results = addResult(results, &events[i])
	}
	return results
}

// addResult adds e to results when it is a call's result and the first
// of its call, making results when it is nil; it returns results.
func addResult(results map[string]callResult, e *store.Event) map[string]callResult {
	if e.Kind != store.KindToolResult {
		return results
	}
	if results == nil {
		results = map[string]callResult{}
	}
	if _, ok := results[e.CallID]; !ok {
		results[e.CallID] = callResult{seq: e.Seq, text: e.Text, isErr: e.IsError}
	}
	return results
}

// joinedAfter finds each message that joined the turn while the model
// answered (written after what the answer saw, before the answer): it
// is read after that answer and its calls' results, where the model
// first met it. after holds them by the answer's number, held by their
// own; both nil when there is none.
func joinedAfter(events []store.Event) (after map[int64][]*store.Event, held map[int64]bool) {
	for i := range events {
		e := &events[i]
		if e.Kind != store.KindMessage {
			continue
		}
		for j := i + 1; j < len(events); j++ {
			a := &events[j]
			if a.Kind == store.KindAnswer {
				if a.Seen > 0 && a.Seen < e.Seq {
					if after == nil {
						after, held = map[int64][]*store.Event{}, map[int64]bool{}
					}
					after[a.Seq] = append(after[a.Seq], e)
					held[e.Seq] = true
				}
				break
			}
		}
	}
	return after, held
}

// answerParts is an answer as the model sees it (its thinking, its text,
// its calls: never no part at all) and the answers to its calls, from
// results, as the next user message begins; as text with no tools
// offered.
func answerParts(e *store.Event, results callResults, withTools bool) (parts, answers []model.Part) {
	parts = make([]model.Part, 0, len(e.Thinking)+1+len(e.Calls))
	for _, t := range e.Thinking {
		parts = append(parts, model.ThinkingPart(model.Thinking{Text: t.Text, Signature: t.Signature, Redacted: t.Redacted}))
	}
	if e.Text != "" {
		parts = append(parts, model.Text(e.Text))
	}
	for _, c := range e.Calls {
		text, isErr := unanswered, true
		if r, ok := results.of(c.ID); ok {
			text, isErr = r.text, r.isErr
		}
		if withTools {
			parts = append(parts, model.ToolUse(c.ID, c.Name, c.Input))
			answers = append(answers, model.ToolResult(c.ID, text, isErr))
		} else {
			parts = append(parts, model.Text("[Called "+c.Name+" with "+c.Input+"]"))
			answers = append(answers, model.Text("[The answer of "+c.Name+": "+text+"]"))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, model.Text(""))
	}
	return parts, answers
}

// messageParts is a message as the model sees it: its header, its text
// (when it isn't the owner's, after a line saying who wrote it, quoted:
// Quoted), each a text part of its own, so the text stays the message's
// last text part (the offline model repeats it), then its attachments.
func messageParts(e *store.Event) []model.Part {
	text := e.Text
	if e.From != "" {
		text = Quoted(e.From, e.FromName, e.Hops, text)
	}
	parts := make([]model.Part, 0, 2+len(e.Parts))
	if e.Header != "" {
		parts = append(parts, model.Text(e.Header))
	}
	if text != "" || len(parts) == 0 {
		parts = append(parts, model.Text(text))
	}
	for _, p := range e.Parts {
		switch p.Type {
		case "image":
			parts = append(parts, model.Image(p.MimeType, p.Data))
		case "audio":
			parts = append(parts, model.Audio(p.MimeType, p.Data))
		case "resource":
			if p.Data != "" {
				parts = append(parts, model.Document(p.MimeType, p.Name, p.Data))
			} else {
				parts = append(parts, model.TextDocument(p.MimeType, p.Name, p.Text))
			}
		}
	}
	return parts
}
