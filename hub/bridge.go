package hub

import (
	"context"
	"encoding/json"
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

// queuedHook, when set (by a test, before the hub starts), is told of
// each prompt counted as waiting for its thread's turn.
var queuedHook func(thread string)

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
