package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/home"
	"github.com/lnk-dev/link/store/router"
)

// ErrClosing: the harness is closing and takes no new turn.
var ErrClosing = errors.New("the harness is closing")

// Harness is Link Harness, the agent behind an endpoint: an acp.Agent
// that answers each prompt in a turn of the model and its tools, stored
// in the agent's conversation, for every agent under its home. It holds
// only what can be made again: each agent's open drivers, the turns
// running now, and, for a while, the events of conversations that had a
// turn lately (history), read again from the store whenever they aren't
// what it keeps.
type Harness struct {
	cfg  Config
	id   string       // this process's part of every lease holder
	seq  atomic.Int64 // turns begun, for holders
	life context.Context
	kill context.CancelFunc

	wg      sync.WaitGroup // turns and tasks running
	tasks   sync.WaitGroup // tasks alone: sweeps and the turns they finish
	closing atomic.Bool

	mu       sync.Mutex
	agents   map[string]*agentStore
	sweeping map[string]bool
	sweeper  chan struct{} // closed to stop Start's timer

	locks convLocks // appends of one conversation, in this process
	hist  *history  // events kept between turns, a cache
	turns sync.Map  // the turn running here of each conversation, for Cancel
	wakes wakes     // steered messages watched here, woken as a turn lets go (steered.go)
	// summarizing holds, by conversation, a channel closed once the turn
	// summarizing it after its answer lets its lease go: a message that
	// comes meanwhile waits for it, for a turn of its own.
	summarizing sync.Map
	// onWaitSummarized, when set (by a test), is called as a message begins
	// to wait for a summary.
	onWaitSummarized func()
	idle             idle       // gives free memory back once nothing runs
	healthLook       healthLook // Health's last look at the home
	seen             sweepSeen  // conversations a sweep found nothing waiting in, a saving
	prompts          *prompt.Composer
	with             *collaborators // what its turns work with (turn.go)
}

var _ acp.Agent = (*Harness)(nil)

// agentStore is one agent's store, opened once: its paths, its drivers,
// the files of its conversations' folders and its answers on their way.
type agentStore struct {
	paths   store.Paths
	drivers map[string]store.Conversations
	folders *folder.Files
	answers *delivery.Answers
}

// New returns a Harness for cfg, or the error of a cfg that doesn't
// validate. It starts nothing: Start begins the sweeps.
func New(cfg Config) (*Harness, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var b [6]byte
	rand.Read(b[:])
	life, kill := context.WithCancel(context.Background())
	h := &Harness{
		cfg:      cfg,
		id:       hex.EncodeToString(b[:]),
		life:     life,
		kill:     kill,
		agents:   map[string]*agentStore{},
		sweeping: map[string]bool{},
		sweeper:  make(chan struct{}),
		hist:     newHistory(cfg.KeepEvents),
		idle:     idle{after: cfg.IdleFree, least: idleLeast, afterFunc: cfg.AfterFunc},
		prompts:  &prompt.Composer{Files: promptFiles(cfg.Files)},
	}
	h.with = h.collaborators()
	return h, nil
}

// promptFiles is what the composer reads the agents' files through: a
// home's Files remembering the names it found missing (home.Misses), so
// a turn's prompt doesn't look again for files that aren't there: each
// compose reads through one Look, one lstat of the home when nothing
// changed.
func promptFiles(f store.Files) store.Files {
	if hf, ok := f.(home.Files); ok {
		return &home.Misses{Files: hf}
	}
	return f
}

// agent opens agent's store the first time it is asked, resolving what
// a convert stopped midway left first.
func (h *Harness) agent(ctx context.Context, agent string) (*agentStore, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.agents[agent]; a != nil {
		return a, nil
	}
	p, err := store.For(h.cfg.Home, agent)
	if err != nil {
		return nil, err
	}
	if h.cfg.Openers != nil {
		if _, err := convert.Resolve(ctx, p, h.cfg.Openers(p)); err != nil {
			return nil, fmt.Errorf("open the store of %s: %w", agent, err)
		}
	}
	drivers, err := h.cfg.Drivers(p)
	if err != nil {
		return nil, fmt.Errorf("open the store of %s: %w", agent, err)
	}
	a := &agentStore{
		paths:   p,
		drivers: drivers,
		folders: &folder.Files{Paths: p},
		answers: &delivery.Answers{Paths: p, Now: h.cfg.Now, Logger: h.cfg.Logger.With(slog.String("agent", agent))},
	}
	h.agents[agent] = a
	return a, nil
}

// conv is one conversation as a turn reaches it: the agent's store, its
// settings as read for this turn, and the router that keeps it.
type conv struct {
	agent    string
	thread   string
	paths    store.Paths
	settings Settings
	router   *router.Router
	drivers  map[string]store.Conversations
	folders  *folder.Files
	answers  *delivery.Answers

	pinned *router.Pinned // its driver, pinned while the turn holds the lease
	// next is the number its next event likely takes, as last written or
	// read here (0: not known). An append tries it first: a driver
	// refuses a number that isn't the next, and the append then asks.
	next atomic.Int64
}

// keeper is what the conversation's calls go through (router.Pinned).
func (c *conv) keeper() store.Conversations { return c.pinned.Keeper() }

// reader is what the turn reads the conversation through (router.Pinned).
func (c *conv) reader() store.Conversations { return c.pinned.Reader() }

// lease takes (or renews) the conversation's lease for holder, pinning
// its driver (router.Pinned).
func (c *conv) lease(ctx context.Context, holder string, ttl time.Duration) error {
	return c.pinned.Lease(ctx, holder, ttl)
}

// release lets holder's lease go; from then on the router keeps the
// conversation again.
func (c *conv) release(ctx context.Context, holder string) error {
	return c.pinned.Release(ctx, holder)
}

// saw notes that the conversation's events run at least to seq.
func (c *conv) saw(seq int64) {
	for {
		cur := c.next.Load()
		if seq+1 <= cur || c.next.CompareAndSwap(cur, seq+1) {
			return
		}
	}
}

// open reads agent's settings and opens thread's conversation.
func (h *Harness) open(ctx context.Context, agent, thread string) (*conv, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, err
	}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return nil, err
	}
	set, err := h.cfg.Settings(ctx, a.paths)
	if err != nil {
		return nil, fmt.Errorf("read the settings of %s: %w", agent, err)
	}
	r, err := router.New(a.paths, set.Conversations, a.drivers)
	if err != nil {
		return nil, err
	}
	return &conv{agent: agent, thread: thread, paths: a.paths, settings: set, router: r, pinned: r.Pin(thread), drivers: a.drivers, folders: a.folders, answers: a.answers}, nil
}

// holder names a new turn's lease: this process and the turn's number.
func (h *Harness) holder() string {
	return "link-harness-" + h.id + "-" + strconv.FormatInt(h.seq.Add(1), 10)
}

// convLocks are the in-process locks of conversations' appends: a lock
// of its own for each conversation while an append of it runs or waits,
// so no conversation's append (and its sync) waits behind another's.
type convLocks struct {
	mu sync.Mutex
	m  map[histKey]*convLock
}

// convLock is one conversation's lock, and how many appends hold it or
// wait for it.
type convLock struct {
	sync.Mutex
	users int
}

// lock takes the lock of the agent's thread's appends, and returns its
// unlock.
func (l *convLocks) lock(agent, thread string) (unlock func()) {
	k := histKey{agent, thread}
	l.mu.Lock()
	c := l.m[k]
	if c == nil {
		if l.m == nil {
			l.m = map[histKey]*convLock{}
		}
		c = &convLock{}
		l.m[k] = c
	}
	c.users++
	l.mu.Unlock()
	c.Lock()
	return func() {
		c.Unlock()
		l.mu.Lock()
		if c.users--; c.users == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}

// maxAppendTries bounds the retries of an append whose number another
// writer took first.
const maxAppendTries = 64

// appendHook is told of the event Harness.append writes, numbered and
// timed: before each try of the driver's Append (done false), the number
// and time new at a retry, and once after the last (done true, err what
// it came to: nil when the event is stored).
type appendHook func(e store.Event, done bool, err error)

// append writes e as c's next event, numbering and timing it, and tries
// again with the next number when another writer (a message joining the
// turn, another process) took it first. The number it tries first is the
// one after the last it wrote or read, when it knows one; the driver
// refuses it unless it is the next, and it asks then. A hook, when given
// and not nil, is told of each try (appendHook).
func (h *Harness) append(ctx context.Context, c *conv, e store.Event, hook ...appendHook) (ev store.Event, err error) {
	if len(hook) > 0 && hook[0] != nil {
		defer func() { hook[0](ev, true, err) }()
	}
	defer h.locks.lock(c.agent, c.thread)()
	return h.appendLocked(ctx, c, e, hook...)
}

// appendLocked is append under the conversation's lock.
func (h *Harness) appendLocked(ctx context.Context, c *conv, e store.Event, hook ...appendHook) (store.Event, error) {
	var err error
	keeper := c.keeper()
	next := c.next.Load()
	for range maxAppendTries {
		if next <= 0 {
			next, err = store.Next(ctx, keeper, c.thread)
			if err != nil {
				return e, fmt.Errorf("append to %s: %w", c.thread, err)
			}
		}
		e.Seq = next
		e.Time = h.cfg.Now().UTC()
		if len(hook) > 0 && hook[0] != nil {
			hook[0](e, false, nil)
		}
		err = keeper.Append(ctx, c.thread, e)
		if !errors.Is(err, store.ErrSeqTaken) {
			break
		}
		next = 0
	}
	if err != nil {
		return e, fmt.Errorf("append %s to %s: %w", e.Kind, c.thread, err)
	}
	c.saw(e.Seq)
	return e, nil
}

// Close waits for every turn and task running to end, then closes the
// drivers. Turns run to their end: a turn whose caller went keeps its
// answer for recover.
func (h *Harness) Close() error {
	return h.Shutdown(context.Background())
}

// Shutdown is Close bounded by ctx: once ctx ends, the turns still
// running are cancelled (each leaves its conversation as far as it got,
// finished by the next process) and waited for.
func (h *Harness) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if !h.closing.Swap(true) {
		close(h.sweeper)
		h.idle.stop()
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		h.kill()
		<-done
	}
	h.kill()
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, a := range h.agents {
		if err := a.answers.Close(); err != nil {
			errs = append(errs, err)
		}
		for _, d := range a.drivers {
			if c, ok := d.(store.Closer); ok {
				if err := c.Close(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	h.agents = map[string]*agentStore{}
	h.hist.forget()
	return errors.Join(errs...)
}

// begin counts a turn in, waited for by Close; false when the harness is
// closing.
func (h *Harness) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Load() {
		return false
	}
	h.wg.Add(1)
	h.idle.enter()
	return true
}

// end counts a turn or task begun by begin out.
func (h *Harness) end() {
	h.idle.leave()
	h.wg.Done()
}

// background runs fn as task does, waited for by Close, but not as work:
// the harness is idle (idle) while only it runs (Start's timer).
func (h *Harness) background(fn func(ctx context.Context)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Load() {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn(h.life)
	}()
	return true
}

// task runs fn in a goroutine of its own under the harness's life,
// waited for by Close; false when the harness is closing.
func (h *Harness) task(fn func(ctx context.Context)) bool {
	if !h.begin() {
		return false
	}
	h.tasks.Add(1)
	go func() {
		defer h.tasks.Done()
		defer h.end()
		fn(h.life)
	}()
	return true
}

// WaitTasks waits until no task runs: the sweeps Start and Recover
// began, with the turns they finish (each started from its sweep's task,
// so counted before that ends), the answers of messages that joined a
// command, and the tasks begun meanwhile.
func (h *Harness) WaitTasks() { h.tasks.Wait() }
