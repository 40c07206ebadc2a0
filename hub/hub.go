package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lnk-dev/link/endpoint"
)

// Hub serves one stdio harness to Link's bridges: an endpoint.Handler.
type Hub struct {
	cfg      Config
	addrs    []string // the tools' addresses, scrubbed from what is logged or told
	sessions *sessionFile
	ids      atomic.Int64    // request ids to the harness, across its restarts
	answers  *pendingAnswers // answers nobody took, for _link/recover
	gate     stateGate       // keeps agent state's methods between turns

	life context.Context // the hub's; Close ends it
	stop context.CancelFunc
	wg   sync.WaitGroup // harness runs and their stops

	mu        sync.Mutex
	cur       *harness // starting or running; nil when none
	failures  int      // starts failed in a row
	lastFail  string   // the last failure's reason
	notBefore time.Time
	threads   map[string]*thread
	closed    bool
	// noTools is why Link's tools don't reach a harness that takes no
	// MCP server over HTTP ("" when they do), told by /health.
	noTools string
	// toolsRestarted: the harness was started again once to read Link's
	// tools written into its settings.
	toolsRestarted bool
}

var _ endpoint.Handler = (*Hub)(nil)

// New returns a Hub for cfg, or the error of a cfg that doesn't
// validate. Nothing is started until the first message (or
// /health). On Linux the process becomes a child subreaper, so what a
// harness leaves behind is reaped when its process group is ended.
func New(cfg Config) (*Hub, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addrs := addresses(cfg.Tools)
	cfg.Logger = scrubbed(cfg.Logger, addrs)
	sf, err := openSessions(cfg.Sessions, cfg.Logger, cfg.Now())
	if err != nil {
		return nil, err
	}
	kept, err := openAnswers(cfg.Answers, cfg.Logger, cfg.Now())
	if err != nil {
		return nil, err
	}
	adoptOrphans()
	life, stop := context.WithCancel(context.Background())
	return &Hub{cfg: cfg, addrs: addrs, sessions: sf, answers: kept, life: life, stop: stop, threads: map[string]*thread{}}, nil
}

// Close ends the harness (its whole process group: SIGTERM, SIGKILL
// past Grace) and waits for it; every call of it ends at once, turns
// failing. It returns within Grace and a little, whatever the harness
// does.
func (hb *Hub) Close() error {
	hb.mu.Lock()
	hb.closed = true
	h := hb.cur
	hb.mu.Unlock()
	hb.stop()
	if h != nil {
		h.shutdown()
	}
	hb.wg.Wait()
	return nil
}

// ErrClosed refuses a message once the hub is closed.
var ErrClosed = errors.New("the hub is closed")

// Health is nil once the harness has agreed on ACP: one not running is
// started, and one starting is waited for a little (HealthWait). While a
// failed start's wait runs, it is the last failure's reason. A harness
// that takes no MCP server over HTTP, Link's tools not written into its
// settings, is said too: it answers, without them.
func (hb *Hub) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, hb.cfg.HealthWait)
	defer cancel()
	_, err := hb.ready(ctx)
	if err != nil && ctx.Err() != nil {
		return errors.New("the harness is starting")
	}
	if err == nil {
		if why := hb.toolsMissing(); why != "" {
			return errors.New(why)
		}
	}
	return err
}

// ready returns the running harness once it has agreed on ACP, starting
// one when none runs and no failed start's wait is running.
func (hb *Hub) ready(ctx context.Context) (*harness, error) {
	for {
		hb.mu.Lock()
		if hb.closed {
			hb.mu.Unlock()
			return nil, ErrClosed
		}
		h := hb.cur
		if h == nil {
			if now := hb.cfg.Now(); now.Before(hb.notBefore) {
				err := hb.refusal(now)
				hb.mu.Unlock()
				return nil, err
			}
			h = hb.startLocked()
		}
		hb.mu.Unlock()
		select {
		case <-h.agreed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if h.ok() {
			return h, nil
		}
		// It failed to start: the loop meets its wait, or it ended after
		// agreeing and the next start needs none.
	}
}

// startBound is how long a message waits for a harness starting. A start
// is bounded itself, by the call timeout for the store's readying and
// again for initialize, and ends a little after (its process's last
// words read): waiting past that, a message whose start fails is refused
// with the failure's reason, not its own wait's end.
func (hb *Hub) startBound() time.Duration { return 2*hb.cfg.CallTimeout + time.Second }

// refusal is the error of a message while a failed start's wait runs:
// hb.mu is held.
func (hb *Hub) refusal(now time.Time) error {
	return fmt.Errorf("the harness failed to start (%s); it is tried again in %s", hb.lastFail, hb.notBefore.Sub(now).Round(time.Millisecond))
}

// backoff is the wait after n failed starts in a row: a second, doubling
// with each, at most a minute.
func backoff(n int) time.Duration {
	if n < 1 {
		return 0
	}
	d := time.Second
	for i := 1; i < n && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// startLocked starts a harness run: hb.mu is held.
func (hb *Hub) startLocked() *harness {
	h := newHarness(hb)
	hb.cur = h
	hb.wg.Add(1)
	go func() {
		defer hb.wg.Done()
		h.run()
	}()
	return h
}

// ended is told by a harness run that it ended; agreed says whether it
// had agreed on ACP, why how it ended.
func (hb *Hub) ended(h *harness, agreedAt time.Time, why string) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.cur == h {
		hb.cur = nil
	}
	now := hb.cfg.Now()
	if !agreedAt.IsZero() {
		if now.Sub(agreedAt) >= hb.cfg.HealthyStretch {
			hb.failures = 0
		}
		return
	}
	hb.failures++
	hb.lastFail = why
	hb.notBefore = now.Add(backoff(hb.failures))
	hb.cfg.Logger.Warn("harness failed to start", "why", why, "failures", hb.failures, "wait", backoff(hb.failures))
}

// thread is the hub's state of one thread, made at its first message.
func (hb *Hub) thread(name string) *thread {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	t := hb.threads[name]
	if t == nil {
		t = &thread{name: name, lock: make(chan struct{}, 1)}
		hb.threads[name] = t
	}
	return t
}

// thread is one thread's turn lock: a thread's turns run one at a time.
type thread struct {
	name string
	lock chan struct{}
}

// acquire takes the thread's turn, or ctx's error.
func (t *thread) acquire(ctx context.Context) error {
	select {
	case t.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *thread) release() { <-t.lock }
