// Package scripted holds models that need no network: Offline, the model
// a harness answers with when no provider is set up, clearly labelled as
// such; and Scripted, which answers from a queue of responses for tests and
// records every request it is given.
package scripted

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/model"
)

// Label starts every answer of the offline model.
const Label = "[offline model] "

// OfflineName is the offline model's provider name, and its model's name
// when the request names none.
const OfflineName = "offline"

// NoKey is what the offline model says when it is given no reason of its
// own: no provider is set up, and how to set one.
const NoKey = "No model provider key is set, so no model answered. " +
	"To get real answers, set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY, " +
	"or OLLAMA_HOST for a model Ollama runs, and name the model as maker/name " +
	"(anthropic/claude-opus-5-5, ollama/qwen3:8b)."

// maxEcho bounds how much of the message the offline model repeats.
const maxEcho = 2000

// Offline is a model.Provider that needs no network: it answers each
// request, deterministically, by repeating the last text part of the last
// user message (the text sent, not the header before it) and saying why
// no model answered, streamed in a few deltas, calling nothing.
type Offline struct {
	// Why replaces NoKey: why no model answered and what to do (a
	// model.ErrNoProvider's message, which names the key to set).
	Why string
	// Now is the clock for the answer's latency; nil is time.Now.
	Now func() time.Time
}

var _ model.Provider = Offline{}

// Text is the offline model's answer to req.
func (o Offline) Text(req model.Request) string {
	why := o.Why
	if why == "" {
		why = NoKey
	}
	said := lastUserPart(req)
	if said == "" {
		return Label + "I was sent no text to repeat. " + why
	}
	if utf8.RuneCountInString(said) > maxEcho {
		said = string([]rune(said)[:maxEcho]) + "…"
	}
	return Label + "You said: “" + said + "”. " + why
}

// lastUserPart is the last text part of the last user message that has
// one: the text the owner sent, not the header the harness puts in a part
// of its own before it; "" if none has.
func lastUserPart(req model.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != model.RoleUser {
			continue
		}
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if p := m.Parts[j]; p.Kind == model.KindText && p.Text != "" {
				return p.Text
			}
		}
	}
	return ""
}

// Stream answers req as the offline model.
func (o Offline) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	text := o.Text(req)
	if err := stream(ctx, text, nil, 0, onDelta); err != nil {
		return model.Response{}, err
	}
	name := req.Model
	if name == "" {
		name = OfflineName
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return model.Response{
		Text:       text,
		StopReason: model.StopEnd,
		Model:      name,
		Provider:   OfflineName,
		ID:         fmt.Sprintf("offline-%016x", h.Sum64()),
		Usage:      roughUsage(req, text),
		Latency:    now().Sub(start),
	}, nil
}

// stream sends thinking, then text in a few pieces, each after delay,
// stopping at ctx's end or onDelta's error; with no delay each piece
// says More, since what follows it is in hand.
func stream(ctx context.Context, text string, thinking []model.Thinking, delay time.Duration, onDelta func(model.Delta) error) error {
	send := func(d model.Delta) error {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return onDelta(d)
	}
	for _, th := range thinking {
		if th.Text == "" {
			continue
		}
		if err := send(model.Delta{Thinking: th.Text, More: delay == 0}); err != nil {
			return err
		}
	}
	// Without a delay each piece's next (or the end) is in hand already.
	for _, p := range Pieces(text, 3) {
		if err := send(model.Delta{Text: p, More: delay == 0}); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// roughUsage counts four bytes of the request, and of the answer, to a
// token.
func roughUsage(req model.Request, answer string) model.Usage {
	n := 0
	for _, s := range req.System {
		n += len(s.Text)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Data) + len(p.Input)
		}
	}
	return model.Usage{In: int64(max(1, n/4)), Out: int64(max(1, len(answer)/4))}
}
