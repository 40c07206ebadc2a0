// Package scripted is a model that needs no network: Offline, the model
// lnk-link-harness runs with --model offline, which answers each message
// by saying what it heard; and Queue, which answers from a script, for
// tests, recording every request it is given.
package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/model"
)

// Name is the provider's name in the answers it gives, and the route's
// (model.Route.Provider) that cmd wires to it.
const Name = "scripted"

// OfflineModel is the model's name --model offline selects.
const OfflineModel = "offline"

// Offline answers each request with the last user text it was given,
// labelled, in a few chunks, calling nothing. Its usage counts four
// bytes of the request to a token.
type Offline struct{}

var _ model.Provider = Offline{}

// Stream answers req as Offline does.
func (Offline) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	text := "heard: " + req.LastUserText()
	if req.LastUserText() == "" {
		text = "heard nothing to answer"
	}
	return play(ctx, req, Turn{Text: text}, onDelta)
}

// Turn is one scripted answer.
type Turn struct {
	Text     string
	Thinking string
	Calls    []model.ToolCall
	// Stop is the answer's stop reason; "" is tool_use with calls, else end.
	Stop model.StopReason
	// Delay is a pause before each chunk.
	Delay time.Duration
	// Wait, when not nil, holds the answer until it is closed (or the
	// call's context ends).
	Wait <-chan struct{}
	// Err, when set, is the call's error, given before any chunk.
	Err error
	// Chunks is how many pieces the text streams in; 0 is 3.
	Chunks int
	// Usage is the count reported; zero counts four bytes to a token.
	Usage model.Usage
	// CostUSD is the cost reported.
	CostUSD float64
}

// Queue answers each request with its next scripted turn, or, with none
// left, with Then's answer (Offline's when Then is nil). It records every
// request. Safe for concurrent use.
type Queue struct {
	// Then answers once the script is used up; nil is Offline.
	Then model.Provider

	mu    sync.Mutex
	turns []Turn
	reqs  []model.Request
	ids   int
}

var _ model.Provider = (*Queue)(nil)

// Push adds turns to the end of the script.
func (q *Queue) Push(turns ...Turn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.turns = append(q.turns, turns...)
}

// Left is how many scripted turns are still to give.
func (q *Queue) Left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.turns)
}

// Requests are the requests given so far, oldest first.
func (q *Queue) Requests() []model.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]model.Request(nil), q.reqs...)
}

// Stream answers req with the next scripted turn.
func (q *Queue) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	q.mu.Lock()
	q.reqs = append(q.reqs, req)
	if len(q.turns) == 0 {
		q.mu.Unlock()
		then := q.Then
		if then == nil {
			then = Offline{}
		}
		return then.Stream(ctx, req, onDelta)
	}
	t := q.turns[0]
	q.turns = q.turns[1:]
	q.ids++
	n := q.ids
	q.mu.Unlock()
	for i := range t.Calls {
		if t.Calls[i].ID == "" {
			t.Calls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		if t.Calls[i].Input == "" {
			t.Calls[i].Input = "{}"
		}
	}
	return play(ctx, req, t, onDelta)
}

// ErrNoChoice: a turn calls tools though the request said to call none.
var ErrNoChoice = errors.New("scripted turn calls tools the request forbade")

// play streams t as the answer to req.
func play(ctx context.Context, req model.Request, t Turn, onDelta func(model.Delta) error) (model.Response, error) {
	start := time.Now()
	if t.Wait != nil {
		select {
		case <-t.Wait:
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
	}
	if t.Err != nil {
		return model.Response{}, t.Err
	}
	if req.ToolChoice == model.ToolNone && len(t.Calls) > 0 {
		return model.Response{}, ErrNoChoice
	}
	pause := func() error {
		if t.Delay <= 0 {
			return ctx.Err()
		}
		select {
		case <-time.After(t.Delay):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if t.Thinking != "" {
		if err := pause(); err != nil {
			return model.Response{}, err
		}
		if err := onDelta(model.Delta{Thinking: t.Thinking}); err != nil {
			return model.Response{}, err
		}
	}
	n := t.Chunks
	if n <= 0 {
		n = 3
	}
	for _, c := range pieces(t.Text, n) {
		if err := pause(); err != nil {
			return model.Response{}, err
		}
		if err := onDelta(model.Delta{Text: c}); err != nil {
			return model.Response{}, err
		}
	}
	resp := model.Response{
		Text:     t.Text,
		Calls:    append([]model.ToolCall(nil), t.Calls...),
		Model:    req.Model,
		Provider: Name,
		ID:       fmt.Sprintf("scripted-%d", time.Now().UnixNano()),
		Usage:    t.Usage,
		CostUSD:  t.CostUSD,
		Latency:  time.Since(start),
	}
	if t.Thinking != "" {
		resp.Thinking = []model.Thinking{{Text: t.Thinking, Signature: "scripted"}}
	}
	resp.StopReason = t.Stop
	if resp.StopReason == "" {
		resp.StopReason = model.StopEnd
		if len(t.Calls) > 0 {
			resp.StopReason = model.StopToolUse
		}
	}
	if resp.Usage == (model.Usage{}) {
		resp.Usage = model.Usage{In: int64(max(1, requestBytes(req)/4)), Out: int64(max(1, len(t.Text)/4))}
	}
	return resp, nil
}

// requestBytes is a rough size of what req carries.
func requestBytes(req model.Request) int {
	n := 0
	for _, s := range req.System {
		n += len(s.Text)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Data) + len(p.Input)
		}
	}
	return n
}

// pieces cuts s into up to n pieces at rune boundaries, none empty.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	n = min(n, runes)
	size := (runes + n - 1) / n
	var out []string
	for s != "" {
		i, k := 0, 0
		for i < len(s) && k < size {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// Said joins the text parts of every message of req, for a test that
// asks whether the model was given some words.
func Said(req model.Request) string {
	var b strings.Builder
	for _, s := range req.System {
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Text != "" {
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
