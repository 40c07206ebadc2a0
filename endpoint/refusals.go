package endpoint

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLogEvery is how often the endpoint logs what it refused
// (Config.LogEvery).
const DefaultLogEvery = 10 * time.Second

// refusals logs what the endpoint refuses at a bounded rate: the first
// refusal of an interval as it came, the rest counted by status and path
// and logged in one line when the interval ends. A client trying keys
// costs a line per interval, not one per try. No line holds a key.
type refusals struct {
	logger *slog.Logger
	every  time.Duration

	mu     sync.Mutex
	open   bool           // an interval runs: its first refusal was logged
	counts map[string]int // "<status> <path>" of the refusals since
	timer  *time.Timer
}

func newRefusals(logger *slog.Logger, every time.Duration) *refusals {
	return &refusals{logger: logger, every: every, counts: map[string]int{}}
}

// refused logs a refusal, or counts it when one was logged this interval.
func (r *refusals) refused(ctx context.Context, status int, path, why, remote string) {
	r.mu.Lock()
	if r.open {
		r.counts[strconv.Itoa(status)+" "+path]++
		r.mu.Unlock()
		return
	}
	r.open = true
	r.timer = time.AfterFunc(r.every, r.flush)
	r.mu.Unlock()
	r.logger.LogAttrs(ctx, slog.LevelInfo, "endpoint refused", slog.Int("status", status), slog.String("path", path), slog.String("why", why), slog.String("remote", remote))
}

// flush logs the refusals counted in the interval that ended, if any,
// and begins a new one.
func (r *refusals) flush() {
	r.mu.Lock()
	counts := r.counts
	r.counts = map[string]int{}
	r.open = false
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.mu.Unlock()
	if len(counts) == 0 {
		return
	}
	keys := make([]string, 0, len(counts))
	total := 0
	for k, n := range counts {
		keys = append(keys, k+": "+strconv.Itoa(n))
		total += n
	}
	sort.Strings(keys)
	r.logger.LogAttrs(context.Background(), slog.LevelInfo, "endpoint refused more", slog.Int("count", total), slog.Duration("within", r.every), slog.String("by", strings.Join(keys, ", ")))
}
