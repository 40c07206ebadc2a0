package delivery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lnk-dev/link/store"
)

// probeTTL is how long the lease Settle takes, to see that no turn runs,
// lasts if it isn't let go at once (a kill in between).
const probeTTL = 2 * time.Second

// outcome is what Settle makes of a sending answer whose turn is gone.
type outcome int

const (
	eventStored outcome = iota // handed over, once
	eventNever                 // its event never will be: let go
	eventLater                 // a turn may still store it: passed over now
)

// Settle looks, before a recover, at each sending answer whose turn is
// gone (not this process's, or past its Grace), by the event it names:
// the answer is to be handed over only if that event was stored, since
// else its message is unanswered and the sweep answers it again. Another
// event at its number lets it go; none there lets it go when no turn
// holds the conversation's lease (taken for a moment by holder), and
// passes it over this once, its id in the set returned, while one does.
// An answer held without its event (Hold given no Seq) is left to
// Recover. conversations opens what the events are read and the lease
// taken through, once, when some answer needs it.
func (a *Answers) Settle(ctx context.Context, conversations func(context.Context) (store.Conversations, error), holder string) map[string]bool {
	all, err := a.Sending(ctx)
	if err != nil {
		a.logger().LogAttrs(ctx, slog.LevelWarn, "settle answers sending", slog.String("err", err.Error()))
		return nil
	}
	var (
		pass    map[string]bool
		c       store.Conversations
		openErr error
		opened  bool
	)
	for _, k := range all {
		if k.EventTime.IsZero() || k.Seq <= 0 || a.isSending(k.ID) {
			continue
		}
		if !opened {
			c, openErr = conversations(ctx)
			opened = true
		}
		what, err := eventLater, openErr
		if err == nil {
			what, err = settleOne(ctx, c, k, holder)
		}
		if err != nil {
			a.logger().LogAttrs(ctx, slog.LevelWarn, "settle an answer sending", slog.String("thread", k.Thread), slog.String("err", err.Error()))
		}
		switch what {
		case eventNever:
			if err := a.release(k.ID); err != nil {
				a.logger().LogAttrs(ctx, slog.LevelWarn, "settle an answer sending", slog.String("thread", k.Thread), slog.String("err", err.Error()))
			}
		case eventLater:
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
func settleOne(ctx context.Context, c store.Conversations, k Answer, holder string) (outcome, error) {
	ev, ok, err := eventAt(ctx, c, k.Thread, k.Seq)
	if err != nil {
		return eventLater, err
	}
	if !ok {
		_, err := c.Lease(ctx, k.Thread, holder, probeTTL)
		if errors.Is(err, store.ErrLeaseHeld) {
			return eventLater, nil // a turn runs: it may store it yet
		}
		if err != nil {
			return eventLater, err
		}
		ev, ok, err = eventAt(ctx, c, k.Thread, k.Seq)
		rerr := c.Release(context.WithoutCancel(ctx), k.Thread, holder)
		switch {
		case err != nil:
			return eventLater, err
		case !ok:
			return eventNever, rerr // and no turn ran to store it
		}
		err = rerr
	}
	if store.FinalAnswer(ev) && ev.Time.Equal(k.EventTime) {
		return eventStored, err
	}
	return eventNever, err // another's event took the number
}

// eventAt reads thread's event seq; ok is false when there is none yet.
func eventAt(ctx context.Context, c store.Conversations, thread string, seq int64) (store.Event, bool, error) {
	evs, err := c.Read(ctx, thread, seq)
	if err != nil || len(evs) == 0 || evs[0].Seq != seq {
		return store.Event{}, false, err
	}
	return evs[0], true, nil
}
