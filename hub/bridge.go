package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// bridge is one message's connection from a bridge: initialize, the
// session of its thread, its prompt.
type bridge struct {
	hb   *Hub
	req  endpoint.Request
	conn *acp.Conn
	wg   sync.WaitGroup
	gone context.Context // ends when the connection does

	mu          sync.Mutex
	initialized bool
	threads     map[string]bool // sessions opened on this connection
	turns       map[string]*turn
	// queued counts each thread's prompts waiting for the thread's turn,
	// and cancelled says which of those threads were cancelled meanwhile:
	// a prompt cancelled before it is forwarded is answered cancelled,
	// and the harness never sees it.
	queued    map[string]int
	cancelled map[string]bool
}

// ServeACP serves one bridge connection until it ends and every turn it
// began has ended: a turn whose bridge went runs on to its end.
func (hb *Hub) ServeACP(ctx context.Context, req endpoint.Request, f acp.Framer) {
	b := &bridge{hb: hb, req: req, threads: map[string]bool{}, turns: map[string]*turn{}, queued: map[string]int{}, cancelled: map[string]bool{}}
	b.conn = acp.NewConn(f, b.handle)
	b.conn.SetLogger(hb.cfg.Logger)
	b.conn.SetBudget(req.Budget) // charged as each message is read
	if len(hb.addrs) > 0 {
		b.conn.SetScrub(hb.scrub) // an error told the bridge quotes no tool's address
	}
	gone, cancel := context.WithCancel(ctx)
	b.gone = gone
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	go func() {
		<-b.conn.Done()
		cancel()
	}()
	err := b.conn.Run(ctx)
	b.wg.Wait()
	if err != nil {
		hb.cfg.Logger.Debug("bridge connection ended", "remote", req.RemoteAddr, "err", err)
	}
}

func (b *bridge) handle(ctx context.Context, r *acp.Request) {
	switch r.Method {
	case acp.MethodInitialize:
		b.initialize(ctx, r)
	case acp.MethodSessionResume, acp.MethodSessionLoad, acp.MethodSessionNew:
		b.open(ctx, r)
	case acp.MethodSessionPrompt:
		b.prompt(ctx, r)
	case contract.MethodRecover:
		b.recover(ctx, r)
	case contract.MethodStateExport, contract.MethodStateImport:
		b.state(ctx, r)
	case acp.MethodSessionCancel:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(r.Params, &p) == nil {
			b.cancel(ctx, p.SessionID)
		}
	default:
		if !r.IsNotification() {
			r.Fail(ctx, acp.Errorf(acp.CodeMethodNotFound, "method %q not found", truncate(r.Method, 64)))
		}
	}
}

// initialize answers for the harness, starting it when none runs; while a
// failed start's wait runs, it is refused with the failure's reason.
func (b *bridge) initialize(ctx context.Context, r *acp.Request) {
	wctx, cancel := context.WithTimeout(b.gone, b.hb.startBound())
	defer cancel()
	h, err := b.hb.ready(wctx)
	if err != nil {
		r.Fail(ctx, acp.Errorf(acp.CodeInternalError, "%v", err))
		return
	}
	b.mu.Lock()
	b.initialized = true
	b.mu.Unlock()
	prompt := h.caps.prompt
	if len(prompt) == 0 || string(prompt) == "null" {
		prompt = json.RawMessage("{}")
	}
	r.Reply(ctx, map[string]any{
		"protocolVersion": acp.ProtocolVersion,
		"agentCapabilities": map[string]any{
			"loadSession":         true,
			"promptCapabilities":  prompt,
			"sessionCapabilities": map[string]any{"resume": map[string]any{}},
		},
		"authMethods": []any{},
	})
}

// open answers session/resume or session/load of a thread (session/new
// is the default thread's): the harness's session is made or taken up at
// the thread's first prompt, in its turn.
func (b *bridge) open(ctx context.Context, r *acp.Request) {
	b.mu.Lock()
	initialized := b.initialized
	b.mu.Unlock()
	if !initialized {
		r.Fail(ctx, acp.Errorf(acp.CodeInvalidRequest, "initialize comes first"))
		return
	}
	thread := contract.DefaultThread
	if r.Method != acp.MethodSessionNew {
		var p struct {
			SessionID *string `json:"sessionId"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil || p.SessionID == nil {
			r.Fail(ctx, &contract.RuleError{Field: "sessionId", Rule: "a session's sessionId is its thread, a string"})
			return
		}
		if err := contract.CheckThread(*p.SessionID); err != nil {
			r.Fail(ctx, err)
			return
		}
		thread = *p.SessionID
	}
	b.mu.Lock()
	b.threads[thread] = true
	b.mu.Unlock()
	var err error
	if r.Method == acp.MethodSessionNew {
		err = r.Reply(ctx, acp.NewSessionResult{SessionID: thread})
	} else {
		err = r.Reply(ctx, json.RawMessage("{}"))
	}
	if err == nil {
		b.advertise(ctx, thread)
	}
}

// advertise sends the bridge thread's commands: its session's latest list
// in the running harness, with Link's owned actions added; nothing when
// neither is known.
func (b *bridge) advertise(ctx context.Context, thread string) {
	hb := b.hb
	var list json.RawMessage
	hb.mu.Lock()
	h := hb.cur
	hb.mu.Unlock()
	if h != nil {
		session := hb.sessions.get(thread)
		if h.agreedThreads() {
			session = thread // its sessions are the threads, kept in no file
		}
		h.mu.Lock()
		list = h.commands[session]
		h.mu.Unlock()
	}
	if list == nil {
		if len(hb.owned()) == 0 {
			return
		}
		list = json.RawMessage("[]")
	}
	params, _ := json.Marshal(map[string]any{"sessionId": thread, "update": map[string]any{
		"sessionUpdate":     acp.UpdateAvailableCommands,
		"availableCommands": list,
	}})
	b.conn.Notify(ctx, acp.MethodSessionUpdate, json.RawMessage(hb.withOwned(params)))
}

// promptParams are session/prompt's params as the hub reads them; the
// rest goes on as it came.
type promptParams struct {
	SessionID *string         `json:"sessionId"`
	Prompt    json.RawMessage `json:"prompt"`
	Meta      json.RawMessage `json:"_meta"`
}

// readPromptParams reads session/prompt's params, valid JSON, as slices
// of them, never copies (acp.Members): a prompt of many megabytes is held
// once as read. A member named as Go's reader folds it (sessionid) but
// not exactly is read by that reader, as it always was.
func readPromptParams(params json.RawMessage) (promptParams, error) {
	var p promptParams
	folded := false
	err := acp.Members(params, func(key string, v []byte) error {
		switch key {
		case "sessionId":
			var id *string
			if err := json.Unmarshal(v, &id); err != nil {
				return err
			}
			p.SessionID = id
		case "prompt":
			p.Prompt = v
		case "_meta":
			p.Meta = v
		default:
			switch strings.ToLower(key) {
			case "sessionid", "prompt", "_meta":
				folded = true
			}
		}
		return nil
	})
	if err != nil || folded {
		p = promptParams{}
		err = json.Unmarshal(params, &p)
	}
	if string(p.Prompt) == "null" {
		p.Prompt = nil
	}
	return p, err
}

// prompt checks a prompt and runs its turn on a goroutine of its own.
// Its bytes count against the agent's prompts in flight (the endpoint's
// acp.Budget, as Link Harness's) as they are read and until its turn is
// answered; past the bound it is read past, refused, and nothing is
// forwarded.
func (b *bridge) prompt(ctx context.Context, r *acp.Request) {
	b.mu.Lock()
	initialized := b.initialized
	b.mu.Unlock()
	if !initialized {
		r.Fail(ctx, acp.Errorf(acp.CodeInvalidRequest, "initialize comes first"))
		return
	}
	if err := r.Charge(); err != nil { // given back as it is answered
		r.Fail(ctx, err)
		return
	}
	taken := true
	defer func() {
		if taken {
			r.Release()
		}
	}()
	p, err := readPromptParams(r.Params)
	if err != nil {
		r.Fail(ctx, &contract.RuleError{Field: "session/prompt", Rule: "params are an object with sessionId, prompt and _meta"})
		return
	}
	if p.SessionID == nil {
		r.Fail(ctx, &contract.RuleError{Field: "sessionId", Rule: "a prompt names its session"})
		return
	}
	b.mu.Lock()
	open := b.threads[*p.SessionID]
	b.mu.Unlock()
	if !open {
		r.Fail(ctx, &contract.RuleError{Field: "sessionId", Rule: "a prompt's sessionId is a session resumed on this connection"})
		return
	}
	meta, err := contract.ParseMeta(p.Meta)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	if err := acp.CheckBlocks(p.Prompt); err != nil { // no copy of it made
		r.Fail(ctx, err)
		return
	}
	taken = false // the turn gives it back
	b.mu.Lock()
	b.queued[*p.SessionID]++
	b.mu.Unlock()
	if queuedHook != nil {
		queuedHook(*p.SessionID)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer r.Release() // a turn whose bridge went is never answered
		defer b.cancelledBy(r, *p.SessionID)()
		b.turn(r, *p.SessionID, meta, p.Prompt)
	}()
}

// cancelledBy has a $/cancel_request of r, a prompt of thread's, cancel
// the thread as session/cancel does: its running turn's harness is sent
// session/cancel, and a prompt still waiting is never forwarded; r is
// answered as the turn ends (stopReason cancelled). stop ends the watch.
func (b *bridge) cancelledBy(r *acp.Request, thread string) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-r.Cancelled():
			b.cancel(b.gone, thread)
		case <-done:
		}
	}()
	return func() { close(done) }
}

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
	h, err := hb.ready(b.gone)
	if err != nil {
		r.Fail(wctx, acp.Errorf(acp.CodeInternalError, "%v", err))
		return
	}
	session, reset, err := h.session(b.gone, thread)
	if err != nil {
		r.Fail(wctx, acp.Errorf(acp.CodeInternalError, "the harness could not open this thread's session: %v", err))
		return
	}
	fresh := false // the thread's session let go once answered
	if isCmd && cmd.action != nil {
		// A known command goes by a name the session offers: its list is
		// waited for (it may come after session/new answered).
		list, err := h.commandList(b.gone, session)
		if err != nil {
			r.Fail(wctx, acp.Errorf(acp.CodeInternalError, "/%s: %v", cmd.word, err))
			return
		}
		offered := commandNames(list)
		name := rename(cmd, offered)
		if prompt, err = commandPrompt(prompt, name, cmd.rest); err != nil {
			r.Fail(wctx, err)
			return
		}
		fresh = cmd.action.NewSession && offered[name]
	}
	if err := h.useModel(b.gone, session, meta.Model); err != nil {
		r.Fail(wctx, err)
		return
	}
	if h.caps.threads {
		meta = contract.LinkMeta{} // it reads _meta.link itself: nothing written into the text
	}
	params, err := b.forwarded(r.Params, session, meta, prompt)
	if err != nil {
		r.Fail(wctx, err)
		return
	}
	t := newTurn(h, thread, session, b.conn)
	counted = false
	b.mu.Lock()
	cancelled := b.unqueueLocked(thread)
	if !cancelled {
		b.turns[thread] = t // a cancel from now on is the running turn's
	}
	b.mu.Unlock()
	if cancelled {
		t.close()
		r.Reply(wctx, acp.PromptResult{StopReason: acp.StopCancelled})
		return
	}
	defer func() {
		b.mu.Lock()
		if b.turns[thread] == t {
			delete(b.turns, thread)
		}
		b.mu.Unlock()
	}()
	if reset {
		note, _ := json.Marshal(map[string]any{"sessionId": thread, "update": map[string]any{
			"sessionUpdate": acp.UpdateMessageChunk,
			"content":       map[string]string{"type": "text", "text": resetNote},
		}})
		t.push(acp.MethodSessionUpdate, note)
	}
	taken, _ := json.Marshal(contract.TakenParams{SessionID: thread})
	t.push(contract.MethodTaken, taken)
	h.begin(session, t)
	stop := hb.deadline(h, t)
	res, err := b.call(h, t, params)
	if stop() && err == nil {
		note, _ := json.Marshal(map[string]any{"sessionId": thread, "update": map[string]any{
			"sessionUpdate": acp.UpdateMessageChunk,
			"content":       map[string]string{"type": "text", "text": fmt.Sprintf(overdueNote, hb.cfg.TurnTimeout)},
		}})
		t.push(acp.MethodSessionUpdate, note)
	}
	h.finish(session, t)
	t.close()
	if err != nil {
		r.Fail(wctx, err)
		return
	}
	if fresh {
		// The harness may go on in a session its old id doesn't name
		// (Action.NewSession): the thread's next message begins one.
		if err := hb.sessions.forget(thread, session); err != nil {
			hb.cfg.Logger.Warn("the thread's cleared session could not be let go", "thread", thread, "err", err)
		} else {
			h.closeDropped(thread, session)
		}
	}
	if r.Reply(wctx, res) != nil || t.bridgeGone() {
		// Its caller went before it was told: kept for _link/recover.
		hb.answers.keep(thread, t.answerText())
	}
}

// queuedHook, when set (by a test, before the hub starts), is told of
// each prompt counted as waiting for its thread's turn.
var queuedHook func(thread string)

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
		chunk, _ := json.Marshal(map[string]any{"sessionId": thread, "update": map[string]any{
			"sessionUpdate": acp.UpdateMessageChunk,
			"content":       map[string]string{"type": "text", "text": text},
		}})
		t.push(acp.MethodSessionUpdate, chunk)
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

// cancel answers session/cancel of a thread opened on this connection:
// its running turn's session is sent exactly one session/cancel, and
// the permissions it asks from then on are answered cancelled; a prompt
// of the thread still waiting for its turn is never forwarded.
func (b *bridge) cancel(ctx context.Context, thread string) {
	b.mu.Lock()
	t := b.turns[thread]
	if b.queued[thread] > 0 {
		b.cancelled[thread] = true
	}
	b.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}
