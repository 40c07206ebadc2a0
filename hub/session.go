package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// session is thread's session in this run of the harness, made or taken
// up when it has none yet: session/resume of the session the file keeps,
// else session/load when that is all the harness has (or resume failed),
// else a new session, kept in the file before anything is sent in it.
// reset says a session the thread had could not be taken up; one the
// harness doesn't answer in time fails the turn instead, kept.
func (h *harness) session(ctx context.Context, thread string) (session string, reset bool, err error) {
	hb := h.hb
	if h.caps.threads {
		return h.threadSession(ctx, thread)
	}
	kept := hb.sessions.get(thread)
	if kept != "" {
		h.mu.Lock()
		open := h.open[kept]
		h.mu.Unlock()
		if open {
			return kept, false, nil
		}
		params := h.sessionParams(kept)
		for _, m := range []struct {
			method string
			has    bool
		}{{"session/resume", h.caps.resume}, {"session/load", h.caps.load}} {
			if !m.has {
				continue
			}
			// The answer is taken as it comes: null and {} alike; its
			// configOptions, when it has them, kept.
			raw, err := h.call(ctx, m.method, params)
			if err != nil {
				select {
				case <-h.ended:
					return "", false, h.endedErr(err)
				default:
				}
				if ctx.Err() != nil {
					return "", false, err
				}
				if errors.Is(err, context.DeadlineExceeded) {
					// Slow is not refused: the session is kept for the
					// next message, never replaced by a new one.
					return "", false, fmt.Errorf("%s: no answer within %s; the thread keeps its session, and its next message takes it up", m.method, hb.cfg.CallTimeout)
				}
				hb.cfg.Logger.Warn("harness could not take up a session", "thread", thread, "method", m.method, "err", err)
				continue
			}
			h.keepConfig(kept, raw)
			if m.method == "session/load" {
				h.quiet(ctx, kept)
			}
			h.opened(kept)
			return kept, false, nil
		}
		reset = true
	} else {
		// Its session may have been lost with a sessions.json set aside.
		reset = hb.sessions.lostTo(thread)
	}
	raw, err := h.call(ctx, "session/new", h.sessionParams(""))
	if err != nil {
		return "", false, fmt.Errorf("session/new: %w", h.endedErr(err))
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.SessionID == "" {
		return "", false, fmt.Errorf("session/new: answered %s, with no sessionId", truncate(string(raw), 120))
	}
	if err := hb.sessions.set(thread, res.SessionID); err != nil {
		return "", false, err
	}
	h.keepConfig(res.SessionID, raw)
	h.opened(res.SessionID)
	return res.SessionID, reset, nil
}

// threadSession takes up thread as its own session in a harness whose
// sessions are Link's threads: nothing to keep, nothing to reset.
func (h *harness) threadSession(ctx context.Context, thread string) (string, bool, error) {
	h.mu.Lock()
	open := h.open[thread]
	h.mu.Unlock()
	if open {
		return thread, false, nil
	}
	if _, err := h.call(ctx, "session/resume", h.sessionParams(thread)); err != nil {
		return "", false, fmt.Errorf("session/resume: %w", h.endedErr(err))
	}
	h.opened(thread)
	return thread, false, nil
}

// opened marks session made or taken up in this run.
func (h *harness) opened(session string) {
	h.mu.Lock()
	h.open[session] = true
	h.mu.Unlock()
}

// sessionParams are session/new's params, or, with a session, those of
// session/resume and session/load: the hub's folder and Link's tools.
func (h *harness) sessionParams(session string) map[string]any {
	p := map[string]any{"cwd": h.hb.cfg.Dir, "mcpServers": h.hb.mcpServers(h.caps)}
	if session != "" {
		p["sessionId"] = session
	}
	return p
}

// loadQuiet is how long a session just loaded stays quiet before its
// turn goes on: its replay is taken as over.
const loadQuiet = 200 * time.Millisecond

// quiet waits, after session/load answered, until the session has sent
// no update for loadQuiet (or ctx ends): history a harness replays after
// its answer (Gemini CLI 0.61.0 streams it without waiting) then reaches
// no turn, as the replay before the answer doesn't. It costs a thread's
// first turn after a load loadQuiet more.
func (h *harness) quiet(ctx context.Context, session string) {
	h.mu.Lock()
	h.quieting[session] = time.Now()
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.quieting, session)
		h.mu.Unlock()
	}()
	for {
		h.mu.Lock()
		wait := loadQuiet - time.Since(h.quieting[session])
		h.mu.Unlock()
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}
