package mcptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// acquire finds or starts the session a call of srv's needs and counts
// the call in: the kept one, thread's turn's own, or, with thread "" and
// a tool whose sessions aren't kept, one that only lists (nil is
// returned: the listing is made). A session starting lists srv's calls
// again; others wanting the same session wait for that start rather
// than start another, and share its failure.
func (t *Tools) acquire(ctx context.Context, agent string, a *agentTools, srv server, thread string) (*session, error) {
	kept := t.cfg.KeepSession(srv.name)
	listOnly := !kept && thread == ""
	key := "kept\x00" + srv.name
	switch {
	case listOnly:
		key = "list\x00" + srv.name
	case !kept:
		key = "turn\x00" + thread + "\x00" + srv.name
	}
	for {
		a.mu.Lock()
		var stale *session
		if s := a.pooled(kept, thread, srv.name); s != nil {
			if s.addr == srv.addr && !(kept && t.expired(s)) {
				s.busy++
				a.mu.Unlock()
				return s, nil
			}
			if a.retire(s) {
				stale = s
			}
		}
		if op := a.opening[key]; op != nil {
			a.mu.Unlock()
			if stale != nil {
				stale.close()
			}
			select {
			case <-op.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if op.err != nil || listOnly {
				return nil, op.err
			}
			continue
		}
		op := &opening{done: make(chan struct{})}
		a.opening[key] = op
		a.mu.Unlock()
		if stale != nil {
			stale.close()
		}
		return t.start(ctx, agent, a, srv, thread, key, op)
	}
}

// start starts the session op stands for and pools it.
func (t *Tools) start(ctx context.Context, agent string, a *agentTools, srv server, thread, key string, op *opening) (*session, error) {
	kept := t.cfg.KeepSession(srv.name)
	s, l, err := t.open(ctx, srv)
	a.mu.Lock()
	delete(a.opening, key)
	var late *session
	if err == nil && t.life.Err() != nil {
		// Close has taken, or is taking, the pools: one started after
		// it is ended here, never pooled.
		late, s = s, nil
		err = fmt.Errorf("start %s: %w", srv.name, errClosed)
	}
	op.err = err
	if err != nil {
		if late == nil && !errors.Is(err, errClosed) {
			a.failed[srv.name] = true
			a.retryAt[srv.name] = t.cfg.Now().Add(t.cfg.RetryAfter).UnixNano()
		}
		a.mu.Unlock()
		close(op.done)
		if late != nil {
			late.close()
		}
		return nil, err
	}
	delete(a.failed, srv.name)
	a.lists[srv.name] = l
	s.kept, s.thread = kept, thread
	switch {
	case kept:
		a.kept[srv.name] = s
	case thread != "":
		if a.turns[thread] == nil {
			a.turns[thread] = map[string]*session{}
		}
		a.turns[thread][srv.name] = s
	default:
		s.retired = true // it only lists: closed as it's let go
	}
	s.busy++
	a.mu.Unlock()
	close(op.done)
	t.persist(ctx, agent, a)
	if !kept && thread == "" {
		// Never pooled, so no other call has it: ended now.
		a.mu.Lock()
		s.busy--
		a.mu.Unlock()
		s.close()
		return nil, nil
	}
	return s, nil
}

// pooled is the session of tool in its pool, if any.
func (a *agentTools) pooled(kept bool, thread, tool string) *session {
	if kept {
		return a.kept[tool]
	}
	return a.turns[thread][tool]
}

// retire takes s out of its pool, under a's lock, and says whether it
// can be closed now (no call in flight); else its last call closes it.
func (a *agentTools) retire(s *session) bool {
	if !s.retired {
		s.retired = true
		if s.kept {
			if a.kept[s.tool] == s {
				delete(a.kept, s.tool)
			}
		} else if m := a.turns[s.thread]; m != nil && m[s.tool] == s {
			delete(m, s.tool)
			if len(m) == 0 {
				delete(a.turns, s.thread)
			}
		}
	}
	return s.busy == 0
}

// expired says whether kept session s is past its limits: idle for
// KeepIdle, or started KeepAge ago.
func (t *Tools) expired(s *session) bool {
	now := t.cfg.Now()
	return (s.busy == 0 && now.Sub(s.used) >= t.cfg.KeepIdle) || now.Sub(s.started) >= t.cfg.KeepAge
}

// release counts a call of s out, closing s if it was retired or, kept,
// has passed its age.
func (t *Tools) release(a *agentTools, s *session) {
	a.mu.Lock()
	s.busy--
	s.used = t.cfg.Now()
	closeIt := false
	if s.retired || (s.kept && t.expired(s)) {
		closeIt = a.retire(s)
	}
	a.mu.Unlock()
	if !closeIt {
		return
	}
	// In the background: a server whose call was cut off may take its
	// transport's limit (5 s) to say goodbye, and the call's answer
	// needn't wait for it. Close waits; once Close began, its wait may
	// be under way, so the session is ended here instead (Close ends it
	// too, and a session's close is done once).
	t.mu.Lock()
	background := !t.closed
	if background {
		t.closing.Add(1)
	}
	t.mu.Unlock()
	if !background {
		s.close()
		return
	}
	go func() {
		defer t.closing.Done()
		s.close()
	}()
}

// EndTurn ends the sessions of agent's turns that aren't in a call:
// every session that isn't kept between turns. A harness that can say
// the turn's conversation calls EndThreadTurn instead, which leaves
// other conversations' turns theirs.
func (t *Tools) EndTurn(ctx context.Context, agent string) {
	t.endTurns(agent, func(string) bool { return true })
	t.sweep()
}

// EndThreadTurn ends the sessions thread's turn opened that aren't kept
// between turns.
func (t *Tools) EndThreadTurn(ctx context.Context, agent, thread string) {
	t.endTurns(agent, func(th string) bool { return th == thread })
	t.sweep()
}

// endTurns ends agent's turns' sessions of the threads which says.
func (t *Tools) endTurns(agent string, which func(thread string) bool) {
	a := t.agent(agent)
	var closing []*session
	a.mu.Lock()
	for thread, m := range a.turns {
		if !which(thread) {
			continue
		}
		for _, s := range m {
			if a.retire(s) {
				closing = append(closing, s)
			}
		}
	}
	a.mu.Unlock()
	closeAll(closing)
}

// sweep ends every kept session past its limits.
func (t *Tools) sweep() {
	t.mu.Lock()
	agents := make([]*agentTools, 0, len(t.agents))
	for _, a := range t.agents {
		agents = append(agents, a)
	}
	t.mu.Unlock()
	var closing []*session
	for _, a := range agents {
		a.mu.Lock()
		for _, s := range a.kept {
			if t.expired(s) && a.retire(s) {
				closing = append(closing, s)
			}
		}
		a.mu.Unlock()
	}
	closeAll(closing)
}

// sweeper sweeps every SweepEvery until Close.
func (t *Tools) sweeper() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.SweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.sweep()
		}
	}
}

// Close stops the sweep, stops every call and start under way (each
// answered as unavailable, the harness closing) and ends every session,
// waiting for their ends: each bounded by its goodbye's limit (5 s).
func (t *Tools) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.stop)
	// Every call and start under way is stopped first: a session's close
	// waits for its calls in flight, which a server that never answers
	// would hold for good.
	t.end(errClosed)
	agents := make([]*agentTools, 0, len(t.agents))
	for _, a := range t.agents {
		agents = append(agents, a)
	}
	t.mu.Unlock()
	t.wg.Wait()
	// The calls stopped return (each at once: its context ended) before
	// their sessions are closed, so Close returns with none under way. A
	// server still running a stopped call may hold the goodbye to its
	// transport's limit (5 s): the go-sdk's word that the call stopped
	// can lose the race with the goodbye.
	t.calls.Wait()
	var closing []*session
	for _, a := range agents {
		a.mu.Lock()
		for _, s := range a.kept {
			a.retire(s)
			closing = append(closing, s)
		}
		for _, m := range a.turns {
			for _, s := range m {
				a.retire(s)
				closing = append(closing, s)
			}
		}
		a.mu.Unlock()
	}
	closeAll(closing)
	t.closing.Wait()
	return nil
}

// closeAll closes sessions at once, waiting for every one.
func closeAll(sessions []*session) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
}

// persist writes agent's tool-lists.json when its lists changed: the
// list of each of its tools now, this process's, else the file's.
func (t *Tools) persist(ctx context.Context, agent string, a *agentTools) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.mu.Lock()
	lists := make(map[string]listing, len(a.current))
	for _, s := range a.current {
		if l, ok := a.listingOf(s); ok {
			lists[s.name] = l
		}
	}
	b := encodeLists(lists)
	same := string(b) == string(a.written)
	a.mu.Unlock()
	if same {
		return
	}
	path, err := t.cfg.ToolLists(agent)
	if err == nil {
		err = writeLists(context.WithoutCancel(ctx), path, b)
	}
	if err != nil {
		t.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "keep tool-lists.json", slog.String("agent", agent), slog.String("err", err.Error()))
		return
	}
	a.mu.Lock()
	a.written = b
	a.mu.Unlock()
}
