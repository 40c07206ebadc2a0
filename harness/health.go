package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// HealthFresh is how long Health's look at the home holds: /health
// answers anyone who asks, as often as they ask, and each look writes,
// syncs and removes a file; asked more often, it answers what it last
// found, so a stream of asks costs one write a HealthFresh at most.
const HealthFresh = time.Second

// healthLook is Health's last look at the home: when, and what it found.
type healthLook struct {
	mu  sync.Mutex // held through a look: those asking meanwhile wait for it
	at  time.Time
	err error
}

// Health is nil when the harness can take messages, else why not: its
// home can't be written (a read-only file system, a full disk), so every
// message would fail. It looks at most once a HealthFresh (Config.Now's).
// Its words name no path of the machine, since /health answers anyone
// who asks.
func (h *Harness) Health(ctx context.Context) error {
	l := &h.healthLook
	l.mu.Lock()
	defer l.mu.Unlock()
	now := h.cfg.Now()
	if since := now.Sub(l.at); !l.at.IsZero() && since >= 0 && since < HealthFresh {
		return l.err
	}
	l.err = nil
	if err := fsx.CheckWritable(h.cfg.Home); err != nil {
		l.err = fmt.Errorf("the home can't be written: %w", fsx.Cause(err))
	}
	l.at = now
	return l.err
}
