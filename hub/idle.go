package hub

import (
	"context"
	"time"

	"github.com/lnk-dev/link/acp"
)

// usedBy is an open session's thread and when its last turn ended.
type usedBy struct {
	thread string
	at     time.Time
}

// closeIdle closes, with session/close, each session of the run no turn
// has used for IdleClose, until the run ends: an agent may keep a
// process for each session it holds (claude-agent-acp keeps a Claude
// Code of 200 MB and more), and a thread's next message takes its
// session up again by session/resume or session/load. Run only for a
// harness that offers close and one of those.
func (h *harness) closeIdle() {
	every := max(h.hb.cfg.IdleClose/4, 10*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-h.ended:
			return
		case <-tick.C:
		}
		now := time.Now()
		h.mu.Lock()
		var idle []string
		for session, u := range h.used {
			if h.turns[session] == nil && now.Sub(u.at) >= h.hb.cfg.IdleClose {
				idle = append(idle, session)
			}
		}
		h.mu.Unlock()
		for _, session := range idle {
			h.closeSession(session)
		}
	}
}

// closeSession closes session in its thread's turn, if no turn holds
// the thread nor agent state the hub, and it is idle still.
func (h *harness) closeSession(session string) {
	hb := h.hb
	h.mu.Lock()
	u, ok := h.used[session]
	h.mu.Unlock()
	if !ok {
		return
	}
	th := hb.thread(u.thread)
	select {
	case th.lock <- struct{}{}:
	default:
		return // a turn of its thread runs or waits: not idle
	}
	defer th.release()
	done, cancel := context.WithCancel(hb.life)
	cancel()
	if hb.gate.enter(done) != nil {
		return // agent state is exported or imported: another time
	}
	defer hb.gate.leave()
	h.mu.Lock()
	u, ok = h.used[session]
	idle := ok && h.open[session] && h.turns[session] == nil && time.Since(u.at) >= hb.cfg.IdleClose
	h.mu.Unlock()
	if !idle {
		return
	}
	if _, err := h.call(hb.life, acp.MethodSessionClose, map[string]string{"sessionId": session}); err != nil {
		hb.cfg.Logger.Warn("harness did not close an idle session; it stays open", "thread", u.thread, "err", err)
		h.mu.Lock()
		if v, ok := h.used[session]; ok && v == u {
			h.used[session] = usedBy{u.thread, time.Now()} // asked again after another IdleClose
		}
		h.mu.Unlock()
		return
	}
	h.mu.Lock()
	delete(h.open, session)
	delete(h.used, session)
	h.mu.Unlock()
	hb.cfg.Logger.Info("closed an idle session", "thread", u.thread, "idle", hb.cfg.IdleClose)
}

// closeDropped closes session, thread's, which the hub let go (a command
// that clears the conversation began another), with session/close where
// the harness offers it: nobody takes it up again. Called in the thread's
// turn; a harness that doesn't close it keeps it until it stops.
func (h *harness) closeDropped(thread, session string) {
	if h.caps.threads {
		return // its sessions are the threads: none is let go
	}
	h.mu.Lock()
	delete(h.used, session)
	delete(h.configs, session)
	open := h.open[session]
	delete(h.open, session)
	h.mu.Unlock()
	if !h.caps.close || !open {
		return
	}
	if _, err := h.call(h.hb.life, acp.MethodSessionClose, map[string]string{"sessionId": session}); err != nil {
		h.hb.cfg.Logger.Warn("harness did not close a session the hub let go", "thread", thread, "err", err)
		return
	}
	h.hb.cfg.Logger.Info("closed a session the hub let go", "thread", thread)
}
