// Package send sends a message to an agent's endpoint as Link's bridge
// sends one, exactly once across crashes of either side: the scheduler's
// reminders (schedule:<id>), its subagents' tasks and their results
// (task:<id>), its teammates' messages (agent:<id>) and a background
// command's end (run:<id>).
//
// Send is one message's exchange: endpoint.Dial (the proof, then the
// key, on one WebSocket), initialize, session/resume of the thread, and
// session/prompt with _meta.link (from, hops, tools, model) and the
// message's id under contract.MessageMeta. Outbox keeps each message on
// disk before it is sent and until the harness has it; Deliverer sends
// what an Outbox holds, again after a crash or a failure to reach the
// agent. The harness stores a message id once: a message sent again
// after a crash is answered already received (contract.CodeAlreadyReceived),
// so it never begins a second turn.
package send

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// MaxText bounds a message's text, in bytes.
const MaxText = 1 << 20

// MaxAnswer is how much of an answer is read, as a bridge reads one.
const MaxAnswer = 16 << 20

// Message is one message to send: where to, from whom, its words, and its
// id, the same at every try.
type Message struct {
	// ID names the message among all sent to the agent
	// (contract.CheckMessageID); Outbox.Add makes one when it is empty.
	ID string `json:"id"`
	// Since is when the message was first recorded; Outbox.Add sets it
	// when it is zero.
	Since  time.Time `json:"since"`
	Thread string    `json:"thread"`         // the conversation: telegram:42, link:chat
	From   string    `json:"from"`           // schedule:<id>, task:<id>, agent:<id>, run:<id>
	Hops   int       `json:"hops,omitempty"` // the messages, each sent by an agent on its own, that led to it
	Tools  *[]string `json:"tools,omitempty"`
	Model  string    `json:"model,omitempty"`
	Text   string    `json:"text"`
	// Wait: the sender reads the answer (a task's result, a teammate's
	// reply). Without it the message asks the harness to keep the answer
	// for _link/recover (contract.MessageOnce.Recover), so lnk agent chat
	// shows a link: thread's and Link's bridge takes another's to its
	// chat, and the sender lets the connection go once the harness has
	// the message (_link/taken).
	Wait bool `json:"wait,omitempty"`
}

// Check says which rule m breaks, if any.
func (m Message) Check() error {
	if err := contract.CheckMessageID(m.ID); err != nil {
		return err
	}
	if m.Since.IsZero() {
		return errors.New("a message says since when it was recorded")
	}
	if err := contract.CheckThread(m.Thread); err != nil {
		return err
	}
	if err := contract.CheckFrom(m.From); err != nil {
		return err
	}
	if m.Hops < 0 || m.Hops > contract.MaxHops {
		return fmt.Errorf("hops: 0 to %d", contract.MaxHops)
	}
	if m.Tools != nil {
		if len(*m.Tools) > contract.MaxTools {
			return fmt.Errorf("tools: at most %d", contract.MaxTools)
		}
		for _, n := range *m.Tools {
			if err := contract.CheckToolName(n); err != nil {
				return err
			}
		}
	}
	if m.Model != "" {
		if err := contract.CheckModel(m.Model); err != nil {
			return err
		}
	}
	if strings.TrimSpace(m.Text) == "" {
		return errors.New("text: a message says something")
	}
	if len(m.Text) > MaxText {
		return fmt.Errorf("text: at most %d bytes", MaxText)
	}
	return nil
}

// meta is the prompt's _meta of m: Link's link and the message's id.
func (m Message) meta() (json.RawMessage, error) {
	return json.Marshal(map[string]any{
		"link":               contract.LinkMeta{From: m.From, Hops: m.Hops, Tools: m.Tools, Model: m.Model},
		contract.MessageMeta: contract.MessageOnce{ID: m.ID, Since: m.Since.UTC(), Recover: !m.Wait},
	})
}

// Target is the agent's endpoint and how to reach it.
type Target struct {
	URL     string // http://127.0.0.1:18800/acp
	Key     []byte // the endpoint key
	Agent   string // Link-Agent; "" for the endpoint's own
	AgentID string // Link-Agent-Id; "" for none
}

// Result is what came of sending a message.
type Result struct {
	// Already: the harness held the message's id already (a try before a
	// crash reached it); Seq is the event it was stored as. Nothing was
	// stored again.
	Already bool
	Seq     int64
	// Steered: the message joined a turn already running, whose answer
	// answers it.
	Steered bool
	// Answer is the turn's answer as streamed, read only for a message
	// that waits (Message.Wait); StopReason how the turn ended.
	Answer     string
	StopReason string
}

// Error is a send that failed. Refused: the harness refused the message
// (a rule it breaks, an agent it doesn't run): sending it again is
// refused again. Taken: the harness had the message before the failure,
// so its answer is kept for _link/recover.
type Error struct {
	Refused bool
	Taken   bool
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Refused:
		return "the agent refused the message: " + e.Err.Error()
	case e.Taken:
		return "the agent has the message, but its answer was lost on the way: " + e.Err.Error()
	}
	return "send the message: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Refused says whether err is a refusal by the harness, which a try again
// meets again.
func Refused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Refused
}

// Send sends m to the agent at t, once, and waits for the harness to have
// it (a message that doesn't wait) or for its answer (one that does).
func Send(ctx context.Context, t Target, m Message) (Result, error) {
	if err := m.Check(); err != nil {
		return Result{}, &Error{Refused: true, Err: err}
	}
	meta, err := m.meta()
	if err != nil {
		return Result{}, &Error{Refused: true, Err: err}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: t.URL, Key: t.Key, Agent: t.Agent, AgentID: t.AgentID, ReadLimit: MaxAnswer + 1<<20})
	if err != nil {
		var de *endpoint.DialError
		refused := errors.As(err, &de) && (errors.Is(err, endpoint.ErrUnknownAgent) || errors.Is(err, endpoint.ErrAgentShared) || errors.Is(err, endpoint.ErrUnauthorized) || errors.Is(err, endpoint.ErrBadProof))
		return Result{}, &Error{Refused: refused, Err: err}
	}
	h := &heard{wait: m.Wait, taken: make(chan struct{})}
	taken := h.taken
	c := acp.NewClient(ctx, conn, h.notify)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return Result{}, sendErr(err, false)
	}
	if err := c.Resume(ctx, m.Thread); err != nil {
		return Result{}, sendErr(err, false)
	}
	type prompted struct {
		res acp.PromptResult
		err error
	}
	done := make(chan prompted, 1)
	go func() {
		res, err := c.Prompt(ctx, m.Thread, []acp.Block{{Type: "text", Text: m.Text}}, meta)
		done <- prompted{res, err}
	}()
	if !m.Wait {
		// The harness has the message once it tells _link/taken: the
		// connection goes then, and the turn's answer is kept for
		// _link/recover. A refusal or an already received comes
		// instead of the taken.
		select {
		case <-taken:
			return Result{}, nil
		case p := <-done:
			return result(p.res, p.err, isClosed(taken))
		case <-ctx.Done():
			return Result{}, &Error{Taken: isClosed(taken), Err: ctx.Err()}
		}
	}
	p := <-done
	res, err := result(p.res, p.err, isClosed(taken))
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && h.over {
		return res, &Error{Taken: true, Err: fmt.Errorf("the answer passed %d MiB, the most read of one", MaxAnswer>>20)}
	}
	res.Answer = h.answer.String()
	return res, err
}

// heard is what a send hears of its turn: the message taken (taken
// closed), and, when it waits for the answer (wait), its text as
// streamed, up to MaxAnswer (over: past it).
type heard struct {
	wait      bool
	taken     chan struct{}
	takenOnce sync.Once
	mu        sync.Mutex
	answer    strings.Builder
	over      bool
}

// notify takes one of the harness's notifications.
func (h *heard) notify(method string, params json.RawMessage) {
	switch method {
	case contract.MethodTaken:
		h.takenOnce.Do(func() { close(h.taken) })
	case acp.MethodSessionUpdate:
		if !h.wait {
			return
		}
		var n acp.Notification
		var u acp.Update
		if json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil {
			return
		}
		if u.SessionUpdate != acp.UpdateMessageChunk || u.Content == nil {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.answer.Len()+len(u.Content.Text) > MaxAnswer {
			h.over = true
			return
		}
		h.answer.WriteString(u.Content.Text)
	}
}

// result is what came of the prompt's answer res, or err.
func result(res acp.PromptResult, err error, taken bool) (Result, error) {
	if err != nil {
		var ae *acp.Error
		if errors.As(err, &ae) && ae.Code == contract.CodeAlreadyReceived {
			var a contract.AlreadyReceived
			json.Unmarshal(ae.Data, &a)
			return Result{Already: true, Seq: a.Seq}, nil
		}
		return Result{}, sendErr(err, taken)
	}
	return Result{Steered: res.Steered(), StopReason: res.StopReason}, nil
}

// sendErr is err of an exchange, a refusal when the harness answered it
// as an error of its own.
func sendErr(err error, taken bool) error {
	var ae *acp.Error
	refused := errors.As(err, &ae) && !taken && (ae.Code == acp.CodeInvalidParams || ae.Code == acp.CodeInvalidRequest || ae.Code == acp.CodeMethodNotFound)
	return &Error{Refused: refused, Taken: taken, Err: err}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
