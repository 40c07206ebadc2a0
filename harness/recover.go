package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/router"
)

// Recover answers _link/recover for agent: a page of the answers nobody
// took (at most a frame; the rest at the next ask), a crashed turn's
// finished after or one whose caller went, each handed over once (single
// phase) or until done lets it go (two-phase). A
// single phase leaves the answers kept for lnk agent chat send's
// messages that joined a running turn: lnk agent chat asks for its
// thread's itself. It first settles the answers still sending whose turn
// is gone (delivery.Answers.Settle), then starts finishing, in a task,
// any turn a crash left unfinished; their answers come at a later ask.
// What goes wrong is logged; the error sent names no path of the machine.
func (h *Harness) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return res, err
	}
	var pass map[string]bool
	if p.Done == nil {
		pass = a.answers.Settle(ctx, func(ctx context.Context) (store.Conversations, error) {
			set, err := h.cfg.Settings(ctx, a.paths)
			if err != nil {
				return nil, fmt.Errorf("read the settings of %s: %w", agent, err)
			}
			return router.New(a.paths, set.Conversations, a.drivers)
		}, h.holder())
		h.sweepAsync(agent)
	}
	res, err = a.answers.Recover(ctx, p, pass)
	if err != nil {
		return res, h.recoverFailed(ctx, agent, err)
	}
	return res, nil
}

// errRecover is what a client is told of a recover that failed: the
// agent's log has the rest.
var errRecover = errors.New("recover: the answers couldn't be read; the agent's log says why")

// recoverFailed logs why a recover of agent failed and returns what the
// client may be told.
func (h *Harness) recoverFailed(ctx context.Context, agent string, err error) error {
	h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "recover", slog.String("agent", agent), slog.String("err", err.Error()))
	return errRecover
}

// Start finishes, each in a task of its own, the turns a crash left
// unfinished in agents' conversations, now and every SweepEvery until
// Close; agents met later (by a prompt or a recover) are swept too.
func (h *Harness) Start(agents ...string) {
	for _, a := range agents {
		h.sweepAsync(a)
	}
	h.background(func(ctx context.Context) {
		tick := time.NewTicker(h.cfg.SweepEvery)
		defer tick.Stop()
		for {
			select {
			case <-h.sweeper:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				h.hist.expire(h.cfg.Now().Add(-h.cfg.SweepEvery))
				h.mu.Lock()
				names := make([]string, 0, len(h.agents))
				for name := range h.agents {
					names = append(names, name)
				}
				h.mu.Unlock()
				for _, name := range names {
					h.sweepAsync(name)
				}
			}
		}
	})
}

// sweepAsync sweeps agent in a task, unless a sweep of it runs already.
func (h *Harness) sweepAsync(agent string) {
	h.mu.Lock()
	if h.sweeping[agent] {
		h.mu.Unlock()
		return
	}
	h.sweeping[agent] = true
	h.mu.Unlock()
	ok := h.task(func(ctx context.Context) {
		defer func() {
			h.mu.Lock()
			delete(h.sweeping, agent)
			h.mu.Unlock()
		}()
		if err := h.sweep(ctx, agent, new(sync.WaitGroup)); err != nil {
			h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "look for unfinished turns", slog.String("agent", agent), slog.String("err", err.Error()))
		}
	})
	if !ok {
		h.mu.Lock()
		delete(h.sweeping, agent)
		h.mu.Unlock()
	}
}

// sweepWindow is how many of a conversation's latest events a sweep
// reads to tell whether its last message was answered.
const sweepWindow = 256

// Sweep looks through agent's conversations for a turn a crash left
// unfinished (a message with no answer that makes no call after it, and
// no lease held) and finishes each in a task of its own, keeping its
// answer for _link/recover. It returns once those turns have ended, their
// answers kept (they run under the harness's life, not ctx). The agent's
// settings are read once for the sweep, and a log or compact
// conversation whose files haven't changed since the last sweep found
// nothing waiting in it isn't read again (sweepSeen).
func (h *Harness) Sweep(ctx context.Context, agent string) error {
	var finishing sync.WaitGroup
	err := h.sweep(ctx, agent, &finishing)
	finishing.Wait()
	return err
}

// sweep is Sweep but for the wait: it returns once the turns it finishes
// have started, each counted in finishing.
func (h *Harness) sweep(ctx context.Context, agent string, finishing *sync.WaitGroup) error {
	a, err := h.agent(ctx, agent)
	if err != nil {
		return err
	}
	threads, err := router.Threads(ctx, a.paths)
	if err != nil || len(threads) == 0 {
		h.seen.keep(agent, nil)
		return err
	}
	set, err := h.cfg.Settings(ctx, a.paths)
	if err != nil {
		return fmt.Errorf("read the settings of %s: %w", agent, err)
	}
	r, err := router.New(a.paths, set.Conversations, a.drivers)
	if err != nil {
		return err
	}
	// File times are the system's clock, not the harness's (Config.Now).
	since := time.Now().Add(-sweepFresh)
	before := h.seen.last(agent)
	seen := make(map[string]sweepMark, len(before))
	defer func() { h.seen.keep(agent, seen) }()
	var errs []error
	for _, thread := range threads {
		dir, err := a.paths.Conversation(thread)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The fingerprint is taken before the read: what the read sees is
		// at least what it stands for.
		mark, marked := markOf(dir, since)
		if was, ok := before[thread]; marked && ok && was == mark {
			seen[thread] = mark
			continue
		}
		c, err := openIn(a, agent, thread, set, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		last, err := store.Latest(ctx, c.router, thread, sweepWindow)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !waiting(last) {
			if marked {
				seen[thread] = mark
			}
			continue
		}
		holder := h.holder()
		err = c.lease(ctx, holder, h.cfg.LeaseTTL)
		if errors.Is(err, store.ErrLeaseHeld) {
			continue // a turn runs, and answers it
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		finishing.Add(1)
		if !h.task(func(ctx context.Context) { defer finishing.Done(); h.finish(ctx, c, holder) }) {
			finishing.Done()
			c.release(ctx, holder)
		}
	}
	return errors.Join(errs...)
}

// openIn is open for a sweep: thread's conversation of agent's store a,
// with the settings and router read once for the whole sweep.
func openIn(a *agentStore, agent, thread string, set Settings, r *router.Router) (*conv, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, err
	}
	return &conv{agent: agent, thread: thread, paths: a.paths, settings: set, router: r, pinned: r.Pin(thread), drivers: a.drivers, folders: a.folders, answers: a.answers}, nil
}

// finish runs a turn a crash left unfinished, its lease held by holder,
// with nobody waiting: the calls already answered are never made again,
// those without an answer are told to the model as unanswered, and its
// answer is kept for _link/recover.
func (h *Harness) finish(ctx context.Context, c *conv, holder string) {
	t := h.newTurn(c, holder)
	t.out = newAnswer(nil, nil, h.cfg.MaxAnswer, nil)
	t.resume()
	if err := t.refresh(ctx); err != nil {
		c.release(context.WithoutCancel(ctx), holder)
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "finish a turn", slog.String("thread", c.thread), slog.String("err", err.Error()))
		return
	}
	if !waiting(t.events) {
		// Answered since the sweep looked.
		c.release(context.WithoutCancel(ctx), holder)
		return
	}
	t.found()
	h.running(t)
	defer h.ran(t)
	f, err := t.run(ctx)
	if err != nil {
		t.delivery.Failed() // an answer held is a recover's to settle
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "finish a turn", slog.String("thread", c.thread), slog.String("err", err.Error()))
		return
	}
	t.keepAnswer(ctx, f)
	t.keep(h.cfg.Now)
}
