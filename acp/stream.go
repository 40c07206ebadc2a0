package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
)

// stream is the Stream of one prompt: session/update notifications and
// _link/taken on the prompt's connection, under the thread's session id.
type stream struct {
	conn   *Conn
	thread string
	srv    *server // its connection's, for what an editor is told (nil: nothing)

	mu      sync.Mutex
	taken   bool
	message string // the messageId of the chunks streaming now; "" until the next chunk
}

var (
	_ Stream        = (*stream)(nil)
	_ CallsStreamer = (*stream)(nil)
)

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
	m, err := s.takenMessage()
	if err != nil {
		return err
	}
	if err := s.conn.send(ctx, m); err != nil {
		return fmt.Errorf("notify %s: %w", contract.MethodTaken, err)
	}
	return nil
}

// takenMessage is _link/taken of the stream's thread.
func (s *stream) takenMessage() (*Message, error) {
	return notification(contract.MethodTaken, contract.TakenParams{SessionID: s.thread})
}

// answer answers r, the prompt, with res, after _link/taken if the agent
// has not said it yet (a message answered as soon as it is stored, as a
// steered one is): then both go in one write, taken first.
func (s *stream) answer(ctx context.Context, r *Request, res PromptResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken {
		return r.Reply(ctx, res)
	}
	s.taken = true
	taken, err := s.takenMessage()
	if err != nil {
		return err
	}
	return r.replyAfter(ctx, res, taken)
}

// update sends one session/update, after _link/taken if the agent has not
// said it yet: the contract has taken come before any answer.
func (s *stream) update(ctx context.Context, u Update) error {
	return s.sendUpdate(ctx, outNotification{SessionID: s.thread, Update: u})
}

// sendUpdate sends a session/update of each params, in order, after
// _link/taken if the agent has not said it yet: all in one write, taken
// first.
func (s *stream) sendUpdate(ctx context.Context, params ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken && len(params) == 1 {
		return s.conn.Notify(ctx, MethodSessionUpdate, params[0])
	}
	ms := make([]*Message, 0, len(params)+1)
	if !s.taken {
		s.taken = true
		taken, err := s.takenMessage()
		if err != nil {
			return err
		}
		ms = append(ms, taken)
	}
	for _, p := range params {
		m, err := notification(MethodSessionUpdate, p)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if err := s.conn.send(ctx, ms...); err != nil {
		return fmt.Errorf("notify %s: %w", MethodSessionUpdate, err)
	}
	return nil
}

// outNotification is session/update's params as Serve sends them.
type outNotification struct {
	SessionID string `json:"sessionId"`
	Update    Update `json:"update"`
}

// Chunk streams text as an agent_message_chunk, on an editor's
// connection under the messageId of the message it is part of: the
// chunks between two tool calls are one message.
func (s *stream) Chunk(ctx context.Context, text string) error {
	id := ""
	if s.editor() {
		s.mu.Lock()
		if s.message == "" {
			s.message = newMessageID()
		}
		id = s.message
		s.mu.Unlock()
	}
	return s.update(ctx, Update{SessionUpdate: UpdateMessageChunk, Content: &TextContent{Type: "text", Text: text}, MessageID: id})
}

// ToolCall streams a tool call, in progress, titled with the tool's
// name; the next chunk begins a message.
func (s *stream) ToolCall(ctx context.Context, id, title string, activity *bool) error {
	s.endMessage()
	return s.update(ctx, Update{SessionUpdate: UpdateToolCall, ToolCallID: id, Title: title, Status: ToolInProgress, Meta: activityMeta(activity)})
}

// ToolCalls streams calls, begun together, as ToolCall does each, in one
// write; the next chunk begins a message.
func (s *stream) ToolCalls(ctx context.Context, calls []ToolCallStart, activity *bool) error {
	s.endMessage()
	params := make([]any, len(calls))
	for i, c := range calls {
		params[i] = outNotification{SessionID: s.thread, Update: Update{SessionUpdate: UpdateToolCall, ToolCallID: c.ID, Title: c.Title, Status: ToolInProgress, Meta: activityMeta(activity)}}
	}
	return s.sendUpdate(ctx, params...)
}

// ToolCallUpdate streams a tool call's end with its status; the next
// chunk begins a message.
func (s *stream) ToolCallUpdate(ctx context.Context, id, status string, activity *bool) error {
	s.endMessage()
	return s.update(ctx, Update{SessionUpdate: UpdateToolCallUpdate, ToolCallID: id, Status: status, Meta: activityMeta(activity)})
}

func (s *stream) endMessage() {
	s.mu.Lock()
	s.message = ""
	s.mu.Unlock()
}

// newMessageID is a message's id: 128 random bits, in the form of a
// UUID (version 4), as ACP's examples give one.
func newMessageID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Reporter is a Stream that tells an editor how its session stands after
// a turn: Serve's streams are, and on a connection that isn't an
// editor's (Options.Editor) their calls send nothing.
type Reporter interface {
	// Reporting says whether the stream tells an editor anything: when
	// not, a turn need not work out what it would say.
	Reporting() bool
	// Usage tells usage_update: the context used and its size, in
	// tokens, and the turn's cost, added to the session's cost so far.
	Usage(ctx context.Context, u Usage) error
	// SessionInfo tells session_info_update: the session's title (as
	// session/list gives it) and when it was last active.
	SessionInfo(ctx context.Context, title string, updated time.Time) error
	// ConfigOptions tells config_option_update: every config option of
	// the session as it holds now, one changed by other means than
	// session/set_config_option (a /model:set typed in the chat).
	ConfigOptions(ctx context.Context, opts []ConfigOption) error
}

var _ Reporter = (*stream)(nil)

// Usage is what a turn reports of its session's context: Used tokens of
// a window of Size, and CostUSD, what the turn cost in US dollars (0 when
// not known).
type Usage struct {
	Used, Size int64
	CostUSD    float64
}

// usageUpdate is usage_update's update.
type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int64  `json:"used"`
	Size          int64  `json:"size"`
	Cost          *Cost  `json:"cost,omitempty"`
}

// Cost is a session's cost so far: an amount in an ISO 4217 currency.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// sessionInfoUpdate is session_info_update's update.
type sessionInfoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
}

// editor says whether the stream's connection is an editor's.
func (s *stream) editor() bool { return s.srv != nil && s.srv.opt.Editor }

// Reporting says whether the stream's connection is an editor's.
func (s *stream) Reporting() bool { return s.editor() }

// Usage sends usage_update on an editor's connection, the session's cost
// the sum of its turns' on this connection, left out while none is
// known.
func (s *stream) Usage(ctx context.Context, u Usage) error {
	if !s.editor() {
		return nil
	}
	up := usageUpdate{SessionUpdate: UpdateUsage, Used: max(u.Used, 0), Size: max(u.Size, 0)}
	s.srv.mu.Lock()
	s.srv.cost[s.thread] += max(u.CostUSD, 0)
	if c := s.srv.cost[s.thread]; c > 0 {
		up.Cost = &Cost{Amount: c, Currency: "USD"}
	}
	s.srv.mu.Unlock()
	return s.notify(ctx, up)
}

// SessionInfo sends session_info_update on an editor's connection.
func (s *stream) SessionInfo(ctx context.Context, title string, updated time.Time) error {
	if !s.editor() {
		return nil
	}
	up := sessionInfoUpdate{SessionUpdate: UpdateSessionInfo, Title: title}
	if !updated.IsZero() {
		up.UpdatedAt = updated.UTC().Format(time.RFC3339)
	}
	return s.notify(ctx, up)
}

// ConfigOptions sends config_option_update on an editor's connection.
func (s *stream) ConfigOptions(ctx context.Context, opts []ConfigOption) error {
	if !s.editor() {
		return nil
	}
	if opts == nil {
		opts = []ConfigOption{}
	}
	return s.notify(ctx, configOptionsUpdate{SessionUpdate: UpdateConfigOption, ConfigOptions: opts})
}

// configOptionsUpdate is config_option_update's update.
type configOptionsUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// notify sends one session/update of update, a kind Update doesn't hold,
// after _link/taken if the agent has not said it yet.
func (s *stream) notify(ctx context.Context, update any) error {
	return s.sendUpdate(ctx, struct {
		SessionID string `json:"sessionId"`
		Update    any    `json:"update"`
	}{s.thread, update})
}

func activityMeta(activity *bool) *Meta {
	if activity == nil {
		return nil
	}
	a := *activity
	return &Meta{Link: contract.LinkMeta{Activity: &a}}
}
