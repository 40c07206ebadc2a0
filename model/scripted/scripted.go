package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/model"
)

// ScriptedName is the provider name of Scripted's answers that name none.
const ScriptedName = "scripted"

// Errors of a Scripted call, tested with errors.Is.
var (
	// ErrEmpty: a call came after every scripted answer was given.
	ErrEmpty = errors.New("scripted: no answer left")
	// ErrToolChoice: the next answer calls tools though the request said
	// to call none (model.ToolNone); a real model wouldn't.
	ErrToolChoice = errors.New("scripted: answer calls tools the request forbade")
)

// Scripted is a model.Provider for tests: it answers each call with the
// next response of its queue, streamed (thinking, then the text in a few
// pieces), and records every request. Safe for concurrent use.
type Scripted struct {
	// Delay is the pause before each delta.
	Delay time.Duration
	// Before, when set, runs before each answer, after the request is
	// recorded: a test holds a call there (until a channel closes) or
	// fails it. Its error is the call's.
	Before func(ctx context.Context, req model.Request) error

	mu    sync.Mutex
	queue []step
	reqs  []model.Request
	n     int
}

type step struct {
	resp model.Response
	err  error
}

var _ model.Provider = (*Scripted)(nil)

// New is a Scripted answering with rs, in order.
func New(rs ...model.Response) *Scripted {
	s := &Scripted{}
	s.Push(rs...)
	return s
}

// Push adds answers to the end of the queue.
func (s *Scripted) Push(rs ...model.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		s.queue = append(s.queue, step{resp: r})
	}
}

// Fail adds to the end of the queue a call that fails with err (a
// model.ClassifyError of a provider's refusal, say).
func (s *Scripted) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, step{err: err})
}

// Left is how many queued answers are still to give.
func (s *Scripted) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests are the requests given so far, oldest first.
func (s *Scripted) Requests() []model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Request(nil), s.reqs...)
}

// Stream answers req with the next queued response, filling what it
// leaves empty: Model (the request's), Provider (scripted), ID, StopReason
// (tool_use with calls, else end), each call's ID and Input ({}), Usage
// (four bytes to a token) and Latency.
func (s *Scripted) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	start := time.Now()
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	if len(s.queue) == 0 {
		s.mu.Unlock()
		return model.Response{}, fmt.Errorf("answer request %d: %w", len(s.Requests()), ErrEmpty)
	}
	st := s.queue[0]
	s.queue = s.queue[1:]
	s.n++
	n := s.n
	s.mu.Unlock()

	if s.Before != nil {
		if err := s.Before(ctx, req); err != nil {
			return model.Response{}, err
		}
	}
	if st.err != nil {
		return model.Response{}, st.err
	}
	r := st.resp
	if req.ToolChoice == model.ToolNone && len(r.Calls) > 0 {
		return model.Response{}, fmt.Errorf("answer %d: %w", n, ErrToolChoice)
	}
	r.Thinking = append([]model.Thinking(nil), r.Thinking...)
	r.Calls = append([]model.ToolCall(nil), r.Calls...)
	for i := range r.Calls {
		if r.Calls[i].ID == "" {
			r.Calls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		if r.Calls[i].Input == "" {
			r.Calls[i].Input = "{}"
		}
	}
	if err := stream(ctx, r.Text, r.Thinking, s.Delay, onDelta); err != nil {
		return model.Response{}, err
	}
	if r.Model == "" {
		r.Model = req.Model
	}
	if r.Provider == "" {
		r.Provider = ScriptedName
	}
	if r.ID == "" {
		r.ID = fmt.Sprintf("scripted-%d", n)
	}
	if r.StopReason == "" {
		r.StopReason = model.StopEnd
		if len(r.Calls) > 0 {
			r.StopReason = model.StopToolUse
		}
	}
	if r.Usage == (model.Usage{}) {
		r.Usage = roughUsage(req, r.Text)
	}
	if r.Latency == 0 {
		r.Latency = time.Since(start)
	}
	return r, nil
}

// RequestText joins the text of req's system sections and of every text, tool
// result and text document part of its messages, a line each, for a test
// that asks whether the model was given some words.
func RequestText(req model.Request) string {
	var b strings.Builder
	for _, s := range req.System {
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Text != "" && p.Kind != model.KindThinking {
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
