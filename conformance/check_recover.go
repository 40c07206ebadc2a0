package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lnk-dev/link/contract"
)

// recoverPoll is how often the kit asks again while a left answer's turn
// finishes.
const recoverPoll = 20 * time.Millisecond

// leaveWait bounds how long leave waits for _link/taken before it goes
// anyway: whether taken comes is the taken check's, not recover's.
const leaveWait = 500 * time.Millisecond

// leave sends the target's Recover message on thread, waits for
// _link/taken (or the first of the answer, or leaveWait), and goes,
// leaving the turn's answer to nobody.
func (k *kit) leave(ctx context.Context, thread string) error {
	o, err := k.open(ctx, thread)
	if err != nil {
		return err
	}
	defer o.Close()
	id, err := o.r.send(ctx, "session/prompt", promptParams(thread, k.t.Recover.Prompt, nil))
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, leaveWait)
	defer cancel()
	for {
		m, err := o.r.read(wctx)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return nil // had by now, taken or not
			}
			return fmt.Errorf("wait for _link/taken of the message to leave: %w", err)
		}
		if m.Method == "" && string(m.ID) == id {
			return errors.New("the Recover hook's message was answered before its caller went: it must end only once its caller has gone")
		}
		if m.Method == contract.MethodTaken || m.Method == "session/update" && !commandsUpdate(m.Params) {
			return nil
		}
	}
}

// recoverOnce asks _link/recover with params on a connection opened as a
// message's is, and says its result and the result's raw JSON.
func (k *kit) recoverOnce(ctx context.Context, params any) (contract.RecoverResult, json.RawMessage, error) {
	var res contract.RecoverResult
	w, err := k.proved(ctx)
	if err != nil {
		return res, nil, err
	}
	defer w.Close()
	r, _, err := w.upgrade(ctx, k.messageHeaders())
	if err != nil {
		return res, nil, err
	}
	defer r.Close()
	init, _, err := r.call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if err != nil {
		return res, nil, err
	}
	if init.Error != nil {
		return res, nil, fmt.Errorf("initialize: %w", init.Error)
	}
	m, _, err := r.call(ctx, contract.MethodRecover, params)
	if err != nil {
		return res, nil, err
	}
	if m.Error != nil {
		return res, nil, fmt.Errorf("%s %s: %w", contract.MethodRecover, mustJSON(params), m.Error)
	}
	var shape struct {
		Answers json.RawMessage `json:"answers"`
	}
	if json.Unmarshal(m.Result, &shape) != nil || !bytes.HasPrefix(bytes.TrimSpace(shape.Answers), []byte("[")) {
		return res, m.Result, fmt.Errorf("%s %s answered %s, not {\"answers\": [...]}", contract.MethodRecover, mustJSON(params), truncate(string(m.Result), 120))
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return res, m.Result, fmt.Errorf("%s %s answered %s: %w", contract.MethodRecover, mustJSON(params), truncate(string(m.Result), 120), err)
	}
	return res, m.Result, nil
}

// waitFor asks _link/recover with params until an answer of thread comes.
func (k *kit) waitFor(ctx context.Context, params any, thread string) (contract.RecoveredAnswer, error) {
	for {
		res, _, err := k.recoverOnce(ctx, params)
		if err != nil {
			return contract.RecoveredAnswer{}, err
		}
		if a, ok := find(res, thread); ok {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return contract.RecoveredAnswer{}, fmt.Errorf("no answer of %s was handed over by %s %s before the check's time ran out", thread, contract.MethodRecover, mustJSON(params))
		case <-time.After(recoverPoll):
		}
	}
}

func find(res contract.RecoverResult, thread string) (contract.RecoveredAnswer, bool) {
	for _, a := range res.Answers {
		if a.Thread == thread {
			return a, true
		}
	}
	return contract.RecoveredAnswer{}, false
}

func checkRecover(ctx context.Context, k *kit) error {
	thread := k.thread("recover", 0)
	if err := k.leave(ctx, thread); err != nil {
		return err
	}
	got, err := k.waitFor(ctx, map[string]any{}, thread)
	if err != nil {
		return err
	}
	if got.Text == "" {
		return fmt.Errorf("the answer of %s was handed over with no text", thread)
	}
	again, _, err := k.recoverOnce(ctx, map[string]any{})
	if err != nil {
		return err
	}
	if _, ok := find(again, thread); ok {
		return fmt.Errorf("the answer of %s was handed over twice", thread)
	}
	return nil
}

func checkRecoverTwoPhase(ctx context.Context, k *kit) error {
	thread := k.thread("recover-two-phase", 0)
	if err := k.leave(ctx, thread); err != nil {
		return err
	}
	twoPhase := map[string]any{"two_phase": true}
	got, err := k.waitFor(ctx, twoPhase, thread)
	if err != nil {
		return err
	}
	if got.ID == "" {
		return fmt.Errorf("the answer of %s was handed over with no id", thread)
	}
	if got.Text == "" {
		return fmt.Errorf("the answer of %s was handed over with no text", thread)
	}
	again, _, err := k.recoverOnce(ctx, twoPhase)
	if err != nil {
		return err
	}
	if a, ok := find(again, thread); !ok || a.ID != got.ID {
		return fmt.Errorf("the answer %s of %s was not handed over again before done", got.ID, thread)
	}
	unknown := "conformance-no-such-id-" + k.run
	res, raw, err := k.recoverOnce(ctx, map[string]any{"done": []string{unknown}})
	if err != nil {
		return fmt.Errorf("done with an id that isn't one: %w", err)
	}
	if len(res.Answers) != 0 || !emptyAnswers(raw) {
		return fmt.Errorf("done with an id that isn't one answered %s, not {\"answers\": []}", truncate(string(raw), 120))
	}
	kept, _, err := k.recoverOnce(ctx, twoPhase)
	if err != nil {
		return err
	}
	if a, ok := find(kept, thread); !ok || a.ID != got.ID {
		return fmt.Errorf("a done naming only an id that isn't one let the answer %s of %s go", got.ID, thread)
	}
	done := map[string]any{"done": []string{got.ID, unknown}}
	res, raw, err = k.recoverOnce(ctx, done)
	if err != nil {
		return fmt.Errorf("done with its id and an id that isn't one: %w", err)
	}
	if len(res.Answers) != 0 || !emptyAnswers(raw) {
		return fmt.Errorf("done answered %s, not {\"answers\": []}", truncate(string(raw), 120))
	}
	after, _, err := k.recoverOnce(ctx, twoPhase)
	if err != nil {
		return err
	}
	if _, ok := find(after, thread); ok {
		return fmt.Errorf("the answer %s of %s was handed over after done let it go", got.ID, thread)
	}
	return nil
}

// emptyAnswers says whether raw's answers is the empty list, not null.
func emptyAnswers(raw json.RawMessage) bool {
	var shape struct {
		Answers json.RawMessage `json:"answers"`
	}
	return json.Unmarshal(raw, &shape) == nil && string(bytes.Join(bytes.Fields(shape.Answers), nil)) == "[]"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// commandsUpdate says whether a session/update's params are the session's
// command list (available_commands_update), which an agent may send as
// the session opens, before the prompt is had: not the answer's first.
func commandsUpdate(params json.RawMessage) bool {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
	}
	return json.Unmarshal(params, &p) == nil && p.Update.SessionUpdate == "available_commands_update"
}
