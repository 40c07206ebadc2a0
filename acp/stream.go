package acp

import (
	"context"
	"sync"

	"github.com/lnk-dev/link/contract"
)

// stream is the Stream of one prompt: session/update notifications and
// _link/taken on the prompt's connection, under the thread's session id.
type stream struct {
	conn   *Conn
	thread string

	mu    sync.Mutex
	taken bool
}

var _ Stream = (*stream)(nil)

// Taken sends _link/taken once; every later call does nothing.
func (s *stream) Taken(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takenLocked(ctx)
}

func (s *stream) takenLocked(ctx context.Context) error {
	if s.taken {
		return nil
	}
	s.taken = true
	return s.conn.Notify(ctx, contract.MethodTaken, contract.TakenParams{SessionID: s.thread})
}

// update sends one session/update, after _link/taken if the agent has not
// said it yet: the contract has taken come before any answer.
func (s *stream) update(ctx context.Context, u Update) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takenLocked(ctx); err != nil {
		return err
	}
	return s.conn.Notify(ctx, MethodSessionUpdate, outNotification{SessionID: s.thread, Update: u})
}

// outNotification is session/update's params as Serve sends them.
type outNotification struct {
	SessionID string `json:"sessionId"`
	Update    Update `json:"update"`
}

// Chunk streams text as an agent_message_chunk.
func (s *stream) Chunk(ctx context.Context, text string) error {
	return s.update(ctx, Update{SessionUpdate: UpdateMessageChunk, Content: &TextContent{Type: "text", Text: text}})
}

// ToolCall streams a tool call, in progress, titled with the tool's name.
func (s *stream) ToolCall(ctx context.Context, id, title string, activity *bool) error {
	return s.update(ctx, Update{SessionUpdate: UpdateToolCall, ToolCallID: id, Title: title, Status: ToolInProgress, Meta: activityMeta(activity)})
}

// ToolCallUpdate streams a tool call's end with its status.
func (s *stream) ToolCallUpdate(ctx context.Context, id, status string, activity *bool) error {
	return s.update(ctx, Update{SessionUpdate: UpdateToolCallUpdate, ToolCallID: id, Status: status, Meta: activityMeta(activity)})
}

func activityMeta(activity *bool) *Meta {
	if activity == nil {
		return nil
	}
	a := *activity
	return &Meta{Link: contract.LinkMeta{Activity: &a}}
}
