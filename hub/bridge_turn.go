package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// The hub's turn, read in the order it runs (bridge.turn): wait for the
// thread's turn, do a Link-owned command itself (runOwned), make the
// prompt ready for the harness (prepare), note the turn running for a
// cancel (running), forward the prompt and wait for its answer (ask),
// and answer the bridge (answer).

// turn runs one prompt: it waits for the thread's turn, takes up the
// thread's session in the running harness, tells the prompt taken as it
// forwards it, and answers the bridge with the harness's answer, or an
// error once the harness stops.
func (b *bridge) turn(r *acp.Request, thread string, meta contract.LinkMeta, prompt json.RawMessage) {
	hb := b.hb
	wctx := context.WithoutCancel(b.gone)
	counted := true // in b.queued
	defer func() {
		if counted {
			b.unqueue(thread)
		}
	}()
	th := hb.thread(thread)
	if err := th.acquire(b.gone); err != nil {
		return // the bridge went before the thread's turn came
	}
	defer th.release()
	if err := hb.gate.enter(b.gone); err != nil {
		return // the bridge went while agent state was exported or imported
	}
	defer hb.gate.leave()
	var cmd parsed
	isCmd := false
	if meta.From == "" && len(prompt) <= maxCommand { // another sender's text is quoted, never a command
		cmd, isCmd = hb.parseCommand(prompt)
	}
	if isCmd && cmd.action != nil && cmd.action.Route != "" {
		b.runOwned(r, thread, cmd)
		return
	}
	var known *parsed // a command the harness is sent by its own name
	if isCmd && cmd.action != nil {
		known = &cmd
	}
	p, err := b.prepare(r.Params, thread, meta, prompt, known)
	if err != nil {
		r.Fail(wctx, err)
		return
	}
	t := newTurn(p.h, thread, p.session, b.conn)
	counted = false
	if !b.running(thread, t) {
		t.close()
		r.Reply(wctx, acp.PromptResult{StopReason: acp.StopCancelled})
		return
	}
	defer b.ran(thread, t)
	res, err := b.ask(p, t)
	b.answer(r, p, t, res, err)
}

// prepared is a prompt made ready for the harness that runs its turn.
type prepared struct {
	h       *harness
	thread  string
	session string     // the thread's session in h
	params  acp.Joined // the prompt as h is sent it (forwarded)
	reset   bool       // the session was begun anew: its caller is told (resetNote)
	fresh   bool       // the session is let go once answered (Action.NewSession)
}

// prepare makes a prompt of thread's ready for the running harness: it
// takes up the thread's session there, gives a known command (cmd, nil
// for a message) the name the session offers for it, sets the model the
// message names, and makes the params the harness is sent. An error is
// what the prompt is answered.
func (b *bridge) prepare(params json.RawMessage, thread string, meta contract.LinkMeta, prompt json.RawMessage, cmd *parsed) (prepared, error) {
	h, err := b.hb.ready(b.gone)
	if err != nil {
		return prepared{}, acp.Errorf(acp.CodeInternalError, "%v", err)
	}
	session, reset, err := h.session(b.gone, thread)
	if err != nil {
		return prepared{}, acp.Errorf(acp.CodeInternalError, "the harness could not open this thread's session: %v", err)
	}
	p := prepared{h: h, thread: thread, session: session, reset: reset}
	if cmd != nil {
		// A known command goes by a name the session offers: its list is
		// waited for (it may come after session/new answered).
		list, err := h.commandList(b.gone, session)
		if err != nil {
			return prepared{}, acp.Errorf(acp.CodeInternalError, "/%s: %v", cmd.word, err)
		}
		offered := commandNames(list)
		name := rename(*cmd, offered)
		if prompt, err = commandPrompt(prompt, name, cmd.rest); err != nil {
			return prepared{}, err
		}
		p.fresh = cmd.action.NewSession && offered[name]
	}
	if err := h.useModel(b.gone, session, meta.Model); err != nil {
		return prepared{}, err
	}
	if h.caps.threads {
		meta = contract.LinkMeta{} // it reads _meta.link itself: nothing written into the text
	}
	if p.params, err = b.forwarded(params, session, meta, prompt); err != nil {
		return prepared{}, err
	}
	return p, nil
}

// running notes t as thread's running turn, which a cancel from then on
// cancels, and counts its prompt out of the waiting ones; false when the
// thread was cancelled while its prompt waited.
func (b *bridge) running(thread string, t *turn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.unqueueLocked(thread) {
		return false
	}
	b.turns[thread] = t
	return true
}

// ran forgets t as thread's running turn.
func (b *bridge) ran(thread string, t *turn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.turns[thread] == t {
		delete(b.turns, thread)
	}
}

// ask runs the turn in its harness: the prompt told taken (after
// resetNote, when the thread's session was begun anew), forwarded, and
// its answer waited for within the hub's deadline (overdueNote streamed
// when it passed).
func (b *bridge) ask(p prepared, t *turn) (json.RawMessage, error) {
	hb := b.hb
	if p.reset {
		t.push(acp.MethodSessionUpdate, textChunk(p.thread, resetNote))
	}
	taken, _ := json.Marshal(contract.TakenParams{SessionID: p.thread})
	t.push(contract.MethodTaken, taken)
	p.h.begin(p.session, t)
	stop := hb.deadline(p.h, t)
	res, err := b.call(p.h, t, p.params)
	if stop() && err == nil {
		t.push(acp.MethodSessionUpdate, textChunk(p.thread, fmt.Sprintf(overdueNote, hb.cfg.TurnTimeout)))
	}
	p.h.finish(p.session, t)
	t.close()
	return res, err
}

// answer answers the bridge with the harness's answer, or its error. A
// session a command cleared is let go first, so the thread's next
// message begins one; an answer its caller didn't get is kept for
// _link/recover.
func (b *bridge) answer(r *acp.Request, p prepared, t *turn, res json.RawMessage, err error) {
	hb := b.hb
	wctx := context.WithoutCancel(b.gone)
	if err != nil {
		r.Fail(wctx, err)
		return
	}
	if p.fresh {
		// The harness may go on in a session its old id doesn't name
		// (Action.NewSession): the thread's next message begins one.
		if err := hb.sessions.forget(p.thread, p.session); err != nil {
			hb.cfg.Logger.Warn("the thread's cleared session could not be let go", "thread", p.thread, "err", err)
		} else {
			p.h.closeDropped(p.thread, p.session)
		}
	}
	if r.Reply(wctx, res) != nil || t.bridgeGone() {
		// Its caller went before it was told: kept for _link/recover.
		hb.answers.keep(p.thread, t.answerText())
	}
}

// textChunk is an agent_message_chunk of text, of thread's session: a
// note the hub streams itself.
func textChunk(thread, text string) []byte {
	note, _ := json.Marshal(map[string]any{"sessionId": thread, "update": map[string]any{
		"sessionUpdate": acp.UpdateMessageChunk,
		"content":       map[string]string{"type": "text", "text": text},
	}})
	return note
}

// unqueue counts a prompt of thread out of the waiting ones, as it is
// forwarded or ends before, and says whether the thread was cancelled
// while it waited.
func (b *bridge) unqueue(thread string) (cancelled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unqueueLocked(thread)
}

// unqueueLocked is unqueue, b.mu held.
func (b *bridge) unqueueLocked(thread string) (cancelled bool) {
	cancelled = b.cancelled[thread]
	if b.queued[thread]--; b.queued[thread] <= 0 {
		delete(b.queued, thread)
		delete(b.cancelled, thread)
	}
	return cancelled
}

// runOwned runs a Link-owned action's route in the thread's turn, and
// answers with what it returns: the harness never sees it.
func (b *bridge) runOwned(r *acp.Request, thread string, cmd parsed) {
	hb := b.hb
	wctx := context.WithoutCancel(b.gone)
	if hb.cfg.Route == nil {
		r.Fail(wctx, acp.Errorf(acp.CodeInternalError, "/%s: Link's actions are not reachable from this hub", cmd.word))
		return
	}
	t := newTurn(nil, thread, "", b.conn)
	taken, _ := json.Marshal(contract.TakenParams{SessionID: thread})
	t.push(contract.MethodTaken, taken)
	ctx, cancel := context.WithTimeout(hb.life, hb.cfg.CallTimeout)
	text, err := hb.cfg.Route(ctx, cmd.action.Route, thread, cmd.rest)
	cancel()
	if err == nil {
		t.push(acp.MethodSessionUpdate, textChunk(thread, text))
	}
	t.close()
	if err != nil {
		r.Fail(wctx, acp.Errorf(acp.CodeInternalError, "/%s: %v", cmd.word, err))
		return
	}
	r.Reply(wctx, acp.PromptResult{StopReason: acp.StopEndTurn})
}

// resetNote is streamed before the answer of a thread whose session the
// harness could not take up: the conversation starts anew there.
const resetNote = "[The agent could not take up this conversation's session after a restart; it starts anew from this message.]\n\n"

// call forwards the prompt and waits for its answer, the harness's end,
// or the turn's failure on the hub's side (which wins, even over an
// answer that came after it).
func (b *bridge) call(h *harness, t *turn, params acp.Joined) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(b.hb.life)
	defer cancel()
	go func() {
		select {
		case <-t.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := h.conn.Call(ctx, acp.MethodSessionPrompt, params)
	if failure := t.failedWith(); failure != nil {
		// The harness is asked to end the turn the hub gave up on.
		t.cancel()
		if errors.As(failure, new(errOverdue)) {
			<-h.ended // stopped: the thread's next turn is another's
		}
		return nil, acp.Errorf(acp.CodeInternalError, "%v", failure)
	}
	if err == nil {
		return res, nil
	}
	var rpcErr *acp.Error
	if errors.As(err, &rpcErr) {
		return nil, rpcErr
	}
	if err := h.endedErr(err); errors.Is(err, errEnded) {
		return nil, acp.Errorf(acp.CodeInternalError, "the agent's harness stopped mid-turn: %v; the next message takes the conversation up again", err)
	}
	return nil, acp.Errorf(acp.CodeInternalError, "%v", err)
}

// forwarded is the prompt's params as the harness is sent them: its
// session the harness's, and a message from someone else with who it is
// written into its text. Its _meta and every other member go on as they
// came, given as slices of the params read (acp.Joined), so the harness's
// copy is the one made.
func (b *bridge) forwarded(params json.RawMessage, session string, meta contract.LinkMeta, prompt json.RawMessage) (acp.Joined, error) {
	if meta.From != "" {
		var err error
		if prompt, err = writeSender(prompt, meta); err != nil {
			return nil, fmt.Errorf("forward prompt: %w", err)
		}
	}
	id, _ := json.Marshal(session)
	out := acp.Joined{[]byte("{")}
	add := func(key string, v []byte) {
		if len(out) > 1 {
			out = append(out, []byte(","))
		}
		out = append(out, append(appendString(nil, key), ':'), v)
	}
	var hasSession, hasPrompt bool
	err := acp.Members(params, func(key string, v []byte) error {
		switch key {
		case "sessionId":
			if !hasSession {
				add(key, id)
			}
			hasSession = true
		case "prompt":
			if !hasPrompt {
				add(key, prompt)
			}
			hasPrompt = true
		default:
			add(key, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("forward prompt: %w", err)
	}
	if !hasSession {
		add("sessionId", id)
	}
	if !hasPrompt {
		add("prompt", prompt)
	}
	return append(out, []byte("}")), nil
}
