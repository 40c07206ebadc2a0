package harness

import (
	"context"
	"log/slog"
	"sync"
)

// renew renews the lease every third of its time, timed by
// Config.AfterFunc, until stop is called.
func (t *turn) renew(ctx context.Context) (stop func()) {
	every := t.with.leaseTTL / 3
	var (
		mu      sync.Mutex // held through a renewal, so stop waits for one running
		stopped bool
		disarm  func() bool
		tick    func()
	)
	tick = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || ctx.Err() != nil {
			return
		}
		if _, err := t.c.keeper().Lease(ctx, t.c.thread, t.holder, t.with.leaseTTL); err != nil {
			t.with.log.LogAttrs(ctx, slog.LevelWarn, "renew a turn's lease", slog.String("thread", t.c.thread), slog.String("err", err.Error()))
		}
		disarm = t.with.clock.afterFunc(every, tick)
	}
	mu.Lock()
	defer mu.Unlock()
	disarm = t.with.clock.afterFunc(every, tick)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		disarm()
	}
}
