package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/lnk-dev/link/contract"
)

// Serve is the server side of one message's connection: it answers
// initialize, session/resume (session/load and session/new too, for other
// clients) of the session its thread names, session/prompt by calling
// a.Prompt, _link/recover by calling a.Recover, and session/cancel by
// cancelling that session's running prompts' contexts (their cause
// ErrCancelled) and asking an agent that is a Canceller to end the
// thread's turn (cancel.go); an agent that is a Commander has its
// commands listed to each session it opens (an available_commands_update
// right after the answer); $/cancel_request stops the request it names
// still in flight (a prompt as session/cancel would). agentName is the
// agent the endpoint routed the connection to, tools its Link-Tools
// header (nil if none).
//
// A prompt's _meta.link, blocks and session are checked before anything
// reaches the agent: a bad one is refused with invalid params naming the
// rule. A turn keeps running if its caller goes; Serve returns once the
// connection has ended and every prompt it started has returned (nil when
// the client closed cleanly). Cancelling ctx cancels the turns too. Serve
// does not close f.
func Serve(ctx context.Context, f Framer, agentName string, tools *[]string, a Agent) error {
	return ServeWith(ctx, f, agentName, tools, a, Options{})
}

// ServeBounded is Serve with the agent's prompts in flight bounded by
// budget, shared by the agent's connections (nil bounds nothing).
func ServeBounded(ctx context.Context, f Framer, agentName string, tools *[]string, a Agent, budget *Budget) error {
	return ServeWith(ctx, f, agentName, tools, a, Options{Budget: budget})
}

// Options are what a connection Serve answers offers beyond its
// baseline.
type Options struct {
	// Budget bounds the agent's prompts in flight, shared by its
	// connections (nil bounds nothing).
	Budget *Budget
	// Editor: the connection is an editor's (lnk-link-harness serve
	// --stdio), not a bridge's. It is offered what editors show: the
	// agent's sessions listed (session/list, when it is a SessionLister)
	// and closed (session/close), its config options (a Configurer's:
	// the model picker), and after each turn the context used and the
	// session's title (a Reporter stream's usage_update and
	// session_info_update); each message's chunks carry its messageId.
	// A bridge's connection, one a message, pays for none of it.
	Editor bool
}

// ServeWith is Serve with opt.
func ServeWith(ctx context.Context, f Framer, agentName string, tools *[]string, a Agent, opt Options) error {
	s := &server{agent: agentName, tools: tools, a: a, opt: opt, sessions: map[string]bool{}, running: map[string]map[*turn]struct{}{}, cost: map[string]float64{}}
	s.conn = NewConn(f, s.handle)
	s.conn.SetBudget(opt.Budget)
	s.ctx = ctx
	err := s.conn.Run(ctx)
	s.wg.Wait()
	return err
}

type server struct {
	agent string
	tools *[]string
	a     Agent
	opt   Options
	conn  *Conn
	ctx   context.Context
	wg    sync.WaitGroup

	mu          sync.Mutex
	initialized bool
	sessions    map[string]bool               // opened on this connection
	running     map[string]map[*turn]struct{} // by thread
	cost        map[string]float64            // each session's cost so far on this connection, in USD
}

// turn is one running prompt.
type turn struct {
	cancel    context.CancelCauseFunc
	cancelled bool          // by session/cancel or $/cancel_request
	done      chan struct{} // closed once its prompt is answered
}

func (s *server) handle(ctx context.Context, r *Request) {
	switch r.Method {
	case MethodInitialize:
		s.initialize(ctx, r)
	case MethodSessionResume, MethodSessionLoad:
		s.resume(ctx, r)
	case MethodSessionNew:
		s.newSession(ctx, r)
	case MethodSessionList:
		s.listSessions(ctx, r)
	case MethodSessionClose:
		s.closeSession(ctx, r)
	case MethodSetConfigOption:
		s.setConfigOption(ctx, r)
	case MethodCancelRequest:
		// The Conn closed the request's Cancelled (onCancel).
	case MethodSessionPrompt:
		s.prompt(ctx, r)
	case MethodSessionCancel:
		var p sessionParams
		if json.Unmarshal(r.Params, &p) == nil && p.SessionID != nil {
			s.cancelSession(*p.SessionID)
		}
	case contract.MethodRecover:
		s.recover(ctx, r)
	case contract.MethodStateExport, contract.MethodStateImport:
		s.state(ctx, r)
	default:
		r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", truncate(r.Method, 64)))
	}
}

// initialize answers initialize: Link's threads, agent state when the
// agent keeps it, and, for an editor, closing and listing sessions.
func (s *server) initialize(ctx context.Context, r *Request) {
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
	meta := &InitializeMeta{}
	meta.Link.Threads = true
	_, meta.Link.State = s.a.(StateKeeper)
	caps := SessionCapabilities{Resume: &struct{}{}}
	if s.opt.Editor {
		caps.Close = &struct{}{}
		if _, ok := s.a.(SessionLister); ok {
			caps.List = &struct{}{}
		}
	}
	r.Reply(ctx, InitializeResult{
		Meta:            meta,
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  PromptCapabilities{Image: true, Audio: true, EmbeddedContext: true},
			SessionCapabilities: caps,
		},
		AuthMethods: []json.RawMessage{},
	})
}

// resume answers session/resume and session/load: the thread opened, its
// config options, and, for an editor loading it, its window replayed.
func (s *server) resume(ctx context.Context, r *Request) {
	thread, err := s.open(r.Params)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	opts, err := s.configOptions(ctx, thread)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	if rp, ok := s.a.(Replayer); ok && s.opt.Editor && r.Method == MethodSessionLoad {
		s.loadSession(r, thread, opts, rp)
		return
	}
	// Nothing of the thread's history is replayed: a bridge sends the
	// message alone, and the harness holds the rest.
	s.opened(ctx, r, OpenSessionResult{ConfigOptions: opts}, thread)
}

// newSession answers session/new: the default thread opened, with its
// config options.
func (s *server) newSession(ctx context.Context, r *Request) {
	if err := s.needInit(); err != nil {
		r.Fail(ctx, err)
		return
	}
	opts, err := s.configOptions(ctx, contract.DefaultThread)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	s.mu.Lock()
	s.sessions[contract.DefaultThread] = true
	s.mu.Unlock()
	s.opened(ctx, r, NewSessionResult{SessionID: contract.DefaultThread, ConfigOptions: opts}, contract.DefaultThread)
}

func (s *server) needInit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized {
		return Errorf(CodeInvalidRequest, "initialize comes first")
	}
	return nil
}

// open checks a session request's params and opens its thread's session.
func (s *server) open(params json.RawMessage) (string, error) {
	if err := s.needInit(); err != nil {
		return "", err
	}
	var p sessionParams
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == nil {
		return "", &contract.RuleError{Field: "sessionId", Rule: "a session's sessionId is its thread, a string"}
	}
	if err := contract.CheckThread(*p.SessionID); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.sessions[*p.SessionID] = true
	s.mu.Unlock()
	return *p.SessionID, nil
}

// prompt checks a session/prompt and runs its turn in a goroutine of its
// own, so the connection keeps reading (session/cancel).
func (s *server) prompt(ctx context.Context, r *Request) {
	// Its bytes were charged as they were read; a framer that couldn't
	// has them charged now.
	if err := r.Charge(); err != nil {
		r.Fail(ctx, err)
		return
	}
	p, err := s.checkPrompt(r.Params)
	// The prompt's blocks hold its words now: the message read can go
	// while the turn runs.
	r.Params = nil
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	tctx, cancel := context.WithCancelCause(s.ctx)
	t := &turn{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	if s.running[p.Thread] == nil {
		s.running[p.Thread] = map[*turn]struct{}{}
	}
	s.running[p.Thread][t] = struct{}{}
	s.mu.Unlock()
	s.onCancel(r, t.done, func() { s.cancelTurn(t, p.Thread) })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel(nil)
		defer close(t.done)
		st := &stream{conn: s.conn, thread: p.Thread, srv: s}
		ans, err := s.a.Prompt(tctx, p, st)
		// The turn is over: its prompt's bytes are no longer in flight
		// (counted free before the answer goes, so a caller that has it
		// can send again at once).
		r.Release()
		s.mu.Lock()
		delete(s.running[p.Thread], t)
		cancelled := t.cancelled
		s.mu.Unlock()
		if err != nil && cancelled && errors.Is(err, context.Canceled) {
			ans, err = Outcome{StopReason: StopCancelled}, nil
		}
		// Writes run under the connection's life, never the turn's context.
		wctx := context.WithoutCancel(tctx)
		if err != nil {
			r.Fail(wctx, err)
			return
		}
		res := PromptResult{StopReason: ans.StopReason}
		if res.StopReason == "" {
			res.StopReason = StopEndTurn
		}
		if ans.Steered {
			res.Meta = &Meta{Link: contract.LinkMeta{Steered: true}}
		}
		if err := st.answer(wctx, r, res); err == nil && ans.Delivered != nil {
			ans.Delivered()
		}
	}()
}

// checkPrompt builds the agent's Prompt from session/prompt's params, or
// says which rule they break.
func (s *server) checkPrompt(params json.RawMessage) (Prompt, error) {
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if !initialized {
		return Prompt{}, Errorf(CodeInvalidRequest, "initialize comes first")
	}
	pp, err := decodePromptParams(params)
	if err != nil {
		return Prompt{}, &contract.RuleError{Field: "session/prompt", Rule: "params are an object with sessionId, prompt and _meta"}
	}
	if pp.SessionID == nil {
		return Prompt{}, &contract.RuleError{Field: "sessionId", Rule: "a prompt names its session"}
	}
	thread := *pp.SessionID
	s.mu.Lock()
	open := s.sessions[thread]
	none := len(s.sessions) == 0
	s.mu.Unlock()
	if none {
		return Prompt{}, Errorf(CodeInvalidRequest, "a prompt comes after session/resume of its thread")
	}
	if !open {
		return Prompt{}, &contract.RuleError{Field: "sessionId", Rule: "a prompt's sessionId is a session resumed on this connection"}
	}
	link, err := contract.ParseMeta(pp.Meta)
	if err != nil {
		return Prompt{}, err
	}
	blocks, err := decodeBlocks(pp.Prompt, readInPlace)
	if err != nil {
		return Prompt{}, err
	}
	// A copy of _meta, small, so the prompt holds nothing of the message.
	return Prompt{Agent: s.agent, Thread: thread, Link: link, Tools: s.tools, Blocks: blocks, Meta: bytes.Clone(pp.Meta)}, nil
}

// decodePromptParams reads session/prompt's params, checked valid JSON
// by DecodeMessage, its prompt and _meta slices of them, not copies.
func decodePromptParams(params []byte) (promptParams, error) {
	var pp promptParams
	err := eachMember(params, func(key string, v []byte) error {
		switch key {
		case "sessionId":
			pp.SessionID = nil
			return json.Unmarshal(v, &pp.SessionID)
		case "prompt":
			pp.Prompt = v
		case "_meta":
			pp.Meta = v
		}
		return nil
	})
	return pp, err
}

func (s *server) recover(ctx context.Context, r *Request) {
	p, err := contract.ParseRecoverParams(r.Params)
	if err == nil {
		err = contract.CheckRecoverID(r.ID)
	}
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := s.a.Recover(s.ctx, s.agent, p)
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		if res.Answers == nil {
			res.Answers = []contract.RecoveredAnswer{}
		}
		r.Reply(ctx, res)
	}()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
