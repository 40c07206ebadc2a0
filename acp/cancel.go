package acp

import (
	"context"
	"errors"
)

// Canceller is an Agent that ends a thread's running turn itself when
// session/cancel asks, wherever the turn runs: an agent whose turns
// outlive their prompt's context (a turn that runs to its end when its
// caller goes) can't be stopped by that context alone. Serve calls Cancel
// on session/cancel of a session resumed on its connection, after it has
// cancelled that session's prompts' contexts (with ErrCancelled), and
// drops its error: a notification has no answer.
type Canceller interface {
	// Cancel asks agent's running turn of thread to end: the prompt that
	// began it is then answered with stopReason cancelled.
	Cancel(ctx context.Context, agent, thread string) error
}

// ErrCancelled is the cause (context.Cause) of a prompt's context that
// session/cancel ended: its caller is still there, waiting for the answer
// and for what streams before it, unlike a context that ended because the
// server did.
var ErrCancelled = errors.New("the session was cancelled")

// IsCancelled says whether ctx ended by session/cancel, its caller still
// waiting.
func IsCancelled(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrCancelled)
}

// cancelSession answers session/cancel of thread: its running prompts'
// contexts are cancelled with ErrCancelled and, when the agent is a
// Canceller and the session was resumed on this connection, the agent
// is asked to end the thread's turn, in a goroutine Serve waits for.
func (s *server) cancelSession(thread string) {
	s.mu.Lock()
	open := s.sessions[thread]
	for t := range s.running[thread] {
		t.cancelled = true
		t.cancel(ErrCancelled)
	}
	s.mu.Unlock()
	c, ok := s.a.(Canceller)
	if !ok || !open {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.Cancel(s.ctx, s.agent, thread)
	}()
}

// ErrRequestCancelled is the cause of a request's context that
// $/cancel_request ended: the request is answered with
// CodeRequestCancelled, a prompt with stopReason cancelled.
var ErrRequestCancelled = errors.New("the request was cancelled ($/cancel_request)")

// onCancel calls stop, in a goroutine Serve waits for, if the peer
// cancels r ($/cancel_request) before done is closed: the goroutine
// starts only for a cancel.
func (s *server) onCancel(r *Request, done <-chan struct{}, stop func()) {
	if r.Cancelled() == nil {
		return
	}
	r.whenCancelled(func() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case <-done:
			default:
				stop()
			}
		}()
	})
}

// async runs a request's work in a goroutine of its own, so the
// connection keeps reading, its context ended by $/cancel_request, and
// answers it with what the work gives: CodeRequestCancelled once
// cancelled and failed for it.
func (s *server) async(r *Request, work func(ctx context.Context) (any, error)) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	done := make(chan struct{})
	s.onCancel(r, done, func() { cancel(ErrRequestCancelled) })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel(nil)
		res, err := work(ctx)
		close(done)
		wctx := context.WithoutCancel(ctx)
		switch {
		case err != nil && errors.Is(context.Cause(ctx), ErrRequestCancelled):
			r.Fail(wctx, Errorf(CodeRequestCancelled, "%s was cancelled ($/cancel_request)", r.Method))
		case err != nil:
			r.Fail(wctx, err)
		default:
			r.Reply(wctx, res)
		}
	}()
}

// cancelTurn ends t, the prompt's turn $/cancel_request named, as
// session/cancel would its session's: its context cancelled with
// ErrCancelled, and a Canceller asked to end the thread's turn.
func (s *server) cancelTurn(t *turn, thread string) {
	s.mu.Lock()
	t.cancelled = true
	t.cancel(ErrCancelled)
	open := s.sessions[thread]
	s.mu.Unlock()
	if c, ok := s.a.(Canceller); ok && open {
		c.Cancel(s.ctx, s.agent, thread)
	}
}
