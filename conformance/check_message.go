package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// plainPrompt is a message any agent answers with words.
const plainPrompt = "conformance: say something short"

func checkMessage(ctx context.Context, k *kit) error {
	e, err := k.message(ctx, k.thread("message", 0), plainPrompt, nil)
	if err != nil {
		return err
	}
	return e.answered()
}

// checkTaken: _link/taken, a notification naming the thread, before the
// first chunk and before the prompt's response.
func checkTaken(ctx context.Context, k *kit) error {
	thread := k.thread("taken", 0)
	e, err := k.message(ctx, thread, plainPrompt, nil)
	if err != nil {
		return err
	}
	if err := e.answered(); err != nil {
		return err
	}
	for _, m := range e.updates {
		if m.Method == "_link/taken" {
			if !m.isNotification() {
				return errors.New("_link/taken came as a request, not a notification")
			}
			var p struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(m.Params, &p) != nil || p.SessionID != thread {
				return fmt.Errorf("_link/taken's params %s don't name the session %s", truncate(string(m.Params), 120), thread)
			}
			return nil
		}
		if _, u, ok := m.sessionUpdate(); ok && u.SessionUpdate == "agent_message_chunk" {
			return fmt.Errorf("an agent_message_chunk came before _link/taken: %s", describe(e.updates))
		}
	}
	return fmt.Errorf("no _link/taken before the prompt's response; came: %s", describe(e.updates))
}

// checkAnswer: the answer's words as agent_message_chunks of the thread's
// session, then the prompt's response at the turn's end.
func checkAnswer(ctx context.Context, k *kit) error {
	thread := k.thread("answer", 0)
	e, err := k.message(ctx, thread, plainPrompt, nil)
	if err != nil {
		return err
	}
	if err := e.answered(); err != nil {
		return err
	}
	if err := e.sameSession(); err != nil {
		return err
	}
	text := ""
	for _, c := range e.chunks() {
		text += c
	}
	if text == "" {
		return fmt.Errorf("no words in agent_message_chunks before the prompt's response; came: %s", describe(e.updates))
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(e.response.Result, &r)
	if r.StopReason != "end_turn" {
		return fmt.Errorf("the turn ended %q, not end_turn", r.StopReason)
	}
	return nil
}

// sameSession checks every session/update names the exchange's thread.
func (e *exchange) sameSession() error {
	for _, m := range e.updates {
		if sid, u, ok := m.sessionUpdate(); ok && sid != e.thread {
			return fmt.Errorf("a %s of session %q, not %q", u.SessionUpdate, truncate(sid, 80), e.thread)
		}
	}
	return nil
}

// checkToolCall sends the target's tool-calling message and reads a
// tool_call titled with the tool's name, then a tool_call_update of the
// same call ending it, before the prompt's response.
func checkToolCall(ctx context.Context, k *kit) error {
	hook := k.t.ToolCall
	e, err := k.message(ctx, k.thread("tool-call", 0), hook.Prompt, nil)
	if err != nil {
		return err
	}
	if err := e.answered(); err != nil {
		return err
	}
	if err := e.sameSession(); err != nil {
		return err
	}
	var id string
	for _, m := range e.updates {
		_, u, ok := m.sessionUpdate()
		if !ok {
			continue
		}
		switch {
		case id == "" && u.SessionUpdate == "tool_call":
			if u.Title == nil || *u.Title != hook.Tool {
				title := "no title"
				if u.Title != nil {
					title = fmt.Sprintf("%q", truncate(*u.Title, 80))
				}
				return fmt.Errorf("a tool_call titled %s, not %q", title, hook.Tool)
			}
			if u.ToolCallID == "" {
				return errors.New("a tool_call with no toolCallId")
			}
			id = u.ToolCallID
		case id == "" && u.SessionUpdate == "tool_call_update":
			return errors.New("a tool_call_update before its tool_call")
		case id != "" && u.SessionUpdate == "tool_call_update" && u.ToolCallID == id:
			if u.Status == "completed" || u.Status == "failed" {
				return nil
			}
		}
	}
	if id == "" {
		return fmt.Errorf("no tool_call before the prompt's response; came: %s", describe(e.updates))
	}
	return fmt.Errorf("no tool_call_update ending tool call %s (completed or failed) before the prompt's response; came: %s", id, describe(e.updates))
}
