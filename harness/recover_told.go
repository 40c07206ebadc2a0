package harness

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lnk-dev/link/store"
)

// probeTTL is how long the lease settleTelling takes, to see that no turn
// runs, lasts if it isn't let go at once (a kill in between).
const probeTTL = 2 * time.Second

// fate is what settleTelling makes of an answer kept while told whose
// teller is gone.
type fate int

const (
	toldStored fate = iota // its event is stored: handed over, once
	toldNever              // its event never will be: let go
	toldLater              // a turn may still store it: passed over now
)

// settleTelling looks, before a recover of agent, at each answer kept
// while its caller was told it whose teller is gone (not this process's,
// isTelling), by the event it names: the answer is handed over only if
// its event was stored, since else its message is unanswered and the
// sweep answers it again. An event of another at its number lets it go;
// none there lets it go when no turn holds the conversation's lease, and
// passes it over this once (the ids returned) while one does. A keep
// that names no event (an older harness's) is left to the recover.
func (h *Harness) settleTelling(ctx context.Context, agent string, a *agentStore) map[string]bool {
	all, err := a.folders.Telling(ctx)
	if err != nil {
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "settle answers told", slog.String("agent", agent), slog.String("err", err.Error()))
		return nil
	}
	var pass map[string]bool
	convs := map[string]*conv{}
	for _, k := range all {
		if k.EventTime.IsZero() || k.Seq <= 0 || h.isTelling(k.ID) {
			continue
		}
		what, err := toldLater, error(nil)
		c := convs[k.Thread]
		if c == nil {
			if c, err = h.open(ctx, agent, k.Thread); err == nil {
				convs[k.Thread] = c
			}
		}
		if err == nil {
			what, err = h.settleOne(ctx, c, k)
		}
		if err != nil {
			h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "settle an answer told", slog.String("thread", k.Thread), slog.String("err", err.Error()))
		}
		switch what {
		case toldNever:
			if err := a.folders.Told(ctx, k.ID); err != nil {
				h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "settle an answer told", slog.String("thread", k.Thread), slog.String("err", err.Error()))
			}
		case toldLater:
			if pass == nil {
				pass = map[string]bool{}
			}
			pass[k.ID] = true
		}
	}
	return pass
}

// settleOne reads the event k names: its own when it is an answer with
// k's time exactly. With none there yet, it takes the lease for a moment,
// so no turn can store it meanwhile, and reads again under it.
func (h *Harness) settleOne(ctx context.Context, c *conv, k store.Kept) (fate, error) {
	ev, ok, err := eventAt(ctx, c.router, k.Thread, k.Seq)
	if err != nil {
		return toldLater, err
	}
	if !ok {
		holder := h.holder()
		_, err := c.router.Lease(ctx, k.Thread, holder, probeTTL)
		if errors.Is(err, store.ErrLeaseHeld) {
			return toldLater, nil // a turn runs: it may store it yet
		}
		if err != nil {
			return toldLater, err
		}
		ev, ok, err = eventAt(ctx, c.router, k.Thread, k.Seq)
		rerr := c.router.Release(context.WithoutCancel(ctx), k.Thread, holder)
		switch {
		case err != nil:
			return toldLater, err
		case !ok:
			return toldNever, rerr // and no turn ran to store it
		}
		err = rerr
	}
	if ev.Kind == store.KindAnswer && ev.Time.Equal(k.EventTime) {
		return toldStored, err
	}
	return toldNever, err // another's event took the number
}

// eventAt reads thread's event seq; ok is false when there is none yet.
func eventAt(ctx context.Context, c store.Conversations, thread string, seq int64) (store.Event, bool, error) {
	evs, err := c.Read(ctx, thread, seq)
	if err != nil || len(evs) == 0 || evs[0].Seq != seq {
		return store.Event{}, false, err
	}
	return evs[0], true, nil
}
