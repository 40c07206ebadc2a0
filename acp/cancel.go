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
