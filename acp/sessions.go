package acp

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/lnk-dev/link/contract"
)

// SessionInfo is one session as session/list gives it: its id (a
// thread), its working directory, its title and when it was last active
// (RFC 3339), both left out when not known.
type SessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// ListSessionsResult is session/list's answer: a page of sessions and,
// when more follow, the cursor that asks for them.
type ListSessionsResult struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// listParams are session/list's params: both optional.
type listParams struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

// SessionLister is an Agent whose sessions an editor lists: Serve answers
// session/list by calling it, and says sessionCapabilities.list, on an
// editor's connection (Options.Editor).
type SessionLister interface {
	// ListSessions gives agent's sessions from cursor ("" for the
	// first page), a page at a time, their Cwd left for Serve to fill:
	// a cursor it never gave is refused (a *contract.RuleError).
	ListSessions(ctx context.Context, agent, cursor string) (ListSessionsResult, error)
}

// Replayer is an Agent that replays a session's conversation to an
// editor that loads it: on an editor's connection Serve answers
// session/load with each entry History gives as a user_message_chunk or
// an agent_message_chunk, each its own message, before the answer. Off
// one, and from an agent that is none, session/load replays nothing.
type Replayer interface {
	// History is what was said in thread lately, oldest first.
	History(ctx context.Context, agent, thread string) ([]contract.StateEntry, error)
}

// UpdateUserChunk is the session/update of a user's message replayed.
const UpdateUserChunk = "user_message_chunk"

// loadSession answers session/load of thread, opened, on an editor's
// connection to a Replayer: its history replayed, then the answer with
// opts and the commands' list.
func (s *server) loadSession(r *Request, thread string, opts []ConfigOption, rp Replayer) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		entries, err := rp.History(s.ctx, s.agent, thread)
		if err != nil {
			r.Fail(s.ctx, err)
			return
		}
		for _, e := range entries {
			kind := UpdateMessageChunk
			if e.Role == contract.RoleUser {
				kind = UpdateUserChunk
			}
			u := Update{SessionUpdate: kind, Content: &TextContent{Type: "text", Text: e.Text}, MessageID: newMessageID()}
			if err := s.conn.Notify(s.ctx, MethodSessionUpdate, outNotification{SessionID: thread, Update: u}); err != nil {
				return // the connection's end, which its read loop meets
			}
		}
		s.opened(s.ctx, r, OpenSessionResult{ConfigOptions: opts}, thread)
	}()
}

// Config option types and categories, as ACP names them.
const (
	ConfigSelect  = "select" // one value of a list
	CategoryModel = "model"  // what an editor shows as its model picker
)

// ConfigOption is one of a session's config options: a select, its
// current value one of its options' values.
type ConfigOption struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Category     string        `json:"category,omitempty"`
	Type         string        `json:"type"`
	CurrentValue string        `json:"currentValue"`
	Options      []ConfigValue `json:"options"`
}

// ConfigValue is one value a select option takes.
type ConfigValue struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Configurer is an Agent whose sessions have config options: on an
// editor's connection Serve gives them in its answer to session/new,
// session/load and session/resume, and answers session/set_config_option
// by calling SetConfigOption.
type Configurer interface {
	// ConfigOptions are thread's config options as they hold now.
	ConfigOptions(ctx context.Context, agent, thread string) ([]ConfigOption, error)
	// SetConfigOption sets thread's option id to value, one of its
	// options' values (else a *contract.RuleError), and gives every
	// option as it holds then.
	SetConfigOption(ctx context.Context, agent, thread, id, value string) ([]ConfigOption, error)
}

// setConfigParams are session/set_config_option's params: a select's
// value is a string; a boolean's is refused, since Serve offers none.
type setConfigParams struct {
	SessionID *string         `json:"sessionId"`
	ConfigID  *string         `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

// configResult is session/set_config_option's answer.
type configResult struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// listSessions answers session/list, its work cancellable by
// $/cancel_request.
func (s *server) listSessions(ctx context.Context, r *Request) {
	lister, ok := s.a.(SessionLister)
	if !s.opt.Editor || !ok {
		r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", r.Method))
		return
	}
	if err := s.needInit(); err != nil {
		r.Fail(ctx, err)
		return
	}
	cwd, cursor, err := parseListParams(r.Params)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	s.async(r, func(ctx context.Context) (any, error) {
		res, err := lister.ListSessions(ctx, s.agent, cursor)
		if err != nil {
			return nil, err
		}
		// A thread belongs to no folder: it is listed under whichever
		// an editor asks for (docs/decisions/054-acp-editor.md).
		for i := range res.Sessions {
			res.Sessions[i].Cwd = cwd
		}
		if res.Sessions == nil {
			res.Sessions = []SessionInfo{}
		}
		return res, nil
	})
}

// parseListParams reads session/list's params, both optional: the cwd
// asked ("/" when none), an absolute path, and the cursor ("" when none).
func parseListParams(params json.RawMessage) (cwd, cursor string, err error) {
	var p listParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return "", "", &contract.RuleError{Field: "session/list", Rule: "params are an object with cwd and cursor, both strings, both optional"}
		}
	}
	cwd = "/"
	if p.Cwd != nil {
		if !absolute(*p.Cwd) {
			return "", "", &contract.RuleError{Field: "cwd", Rule: "a session's cwd is an absolute path"}
		}
		cwd = *p.Cwd
	}
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	return cwd, cursor, nil
}

// absolute says whether p is an absolute path on the editor's machine,
// whichever system it runs: /home/ada, C:\Users\ada, C:/Users/ada or
// \\server\share.
func absolute(p string) bool {
	switch {
	case path.IsAbs(p), strings.HasPrefix(p, `\\`):
		return true
	case len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		c := p[0] | 0x20
		return c >= 'a' && c <= 'z'
	}
	return false
}

// parseSetConfigParams reads session/set_config_option's params: the
// session named (nil when none), the option's id and its value, a
// string.
func parseSetConfigParams(params json.RawMessage) (session *string, id, value string, err error) {
	var p setConfigParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, "", "", &contract.RuleError{Field: "session/set_config_option", Rule: "params are an object with sessionId, configId and value"}
	}
	if p.ConfigID == nil || json.Unmarshal(p.Value, &value) != nil {
		return nil, "", "", &contract.RuleError{Field: "value", Rule: "a config option is set by its configId to a value, a string: every option offered is a select"}
	}
	return p.SessionID, *p.ConfigID, value, nil
}

// openSession checks a request naming a session opened on this
// connection (session/close's, session/set_config_option's), and gives
// its thread.
func (s *server) openSession(id *string) (string, error) {
	if err := s.needInit(); err != nil {
		return "", err
	}
	if id == nil {
		return "", &contract.RuleError{Field: "sessionId", Rule: "a session's sessionId is its thread, a string"}
	}
	s.mu.Lock()
	open := s.sessions[*id]
	s.mu.Unlock()
	if !open {
		return "", &contract.RuleError{Field: "sessionId", Rule: "a session is one opened on this connection (session/new, session/load or session/resume) and not closed since"}
	}
	return *id, nil
}

// closeSession answers session/close: the session's running prompts are
// cancelled as session/cancel does, it is no longer open on this
// connection (a prompt to it is refused until it is resumed again), and
// the answer comes once its prompts have been answered.
func (s *server) closeSession(ctx context.Context, r *Request) {
	if !s.opt.Editor {
		r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", r.Method))
		return
	}
	var p sessionParams
	if err := json.Unmarshal(r.Params, &p); err != nil {
		p.SessionID = nil
	}
	thread, err := s.openSession(p.SessionID)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	var done []chan struct{}
	s.mu.Lock()
	for t := range s.running[thread] {
		done = append(done, t.done)
	}
	s.mu.Unlock()
	s.cancelSession(thread)
	s.mu.Lock()
	delete(s.sessions, thread)
	delete(s.cost, thread)
	s.mu.Unlock()
	s.async(r, func(ctx context.Context) (any, error) {
		for _, d := range done {
			select {
			case <-d:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return struct{}{}, nil
	})
}

// setConfigOption answers session/set_config_option through the agent's
// Configurer.
func (s *server) setConfigOption(ctx context.Context, r *Request) {
	c, ok := s.a.(Configurer)
	if !s.opt.Editor || !ok {
		r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", r.Method))
		return
	}
	session, id, value, err := parseSetConfigParams(r.Params)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	thread, err := s.openSession(session)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	s.async(r, func(ctx context.Context) (any, error) {
		opts, err := c.SetConfigOption(ctx, s.agent, thread, id, value)
		if err != nil {
			return nil, err
		}
		if opts == nil {
			opts = []ConfigOption{}
		}
		return configResult{ConfigOptions: opts}, nil
	})
}

// configOptions are thread's config options for the answer that opens
// its session: none off an editor's connection or from an agent that
// has none.
func (s *server) configOptions(ctx context.Context, thread string) ([]ConfigOption, error) {
	c, ok := s.a.(Configurer)
	if !s.opt.Editor || !ok {
		return nil, nil
	}
	return c.ConfigOptions(ctx, s.agent, thread)
}
