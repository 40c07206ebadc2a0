package scheduler

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/send"
)

// Clock is the scheduler's time: now, and f called once d has passed
// (stop, before, keeps it from being called). Tests give one they move.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
func (wallClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// maxSleep bounds the timer: past it the scheduler looks at the clock
// again, so a machine that slept (whose timers stood still while the
// wall clock moved) or a clock set forward is caught up within it.
const maxSleep = 15 * time.Minute

// Options are a scheduler's.
type Options struct {
	Paths  store.Paths  // the agent's: its home keeps scheduler/, its config.json the settings
	Clock  Clock        // nil: the machine's
	Logger *slog.Logger // what fails outside a call's answer; nil logs nothing
	// Settings reads the settings at each call (nil: ReadSettings).
	Settings func(context.Context) (Settings, error)
	// RetryMin and RetryMax bound the pause before a message that
	// couldn't reach the agent is tried again (tools/send.Deliverer's).
	RetryMin, RetryMax time.Duration
}

// Scheduler is one agent's scheduler: its schedules, the timer of the
// soonest, and the deliverer of its messages.
type Scheduler struct {
	opts    Options
	clock   Clock
	log     *slog.Logger
	book    *book
	deliver *send.Deliverer
	cancel  context.CancelFunc

	mu      sync.Mutex
	byID    map[string]*entry
	queue   queue
	stop    func() bool // the timer's, nil when none
	closed  bool
	onFire  func(*Schedule, time.Time) // a test's, told of each occurrence recorded
	onMoved func(*Schedule)            // a test's, told of each schedule moved on after an occurrence
}

// Dir is the scheduler's folder in the agent's home.
func Dir(p store.Paths) string { return filepath.Join(p.Root, "scheduler") }

// Open reads the schedules kept, starts sending the messages recorded
// and not yet received, and sets the timer: an occurrence due while the
// scheduler was down is sent at once, once, saying it is late (or skipped
// where its schedule says so). Messages wait for SetTarget.
func Open(opts Options) (*Scheduler, error) {
	if opts.Clock == nil {
		opts.Clock = wallClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Settings == nil {
		p := opts.Paths
		opts.Settings = func(ctx context.Context) (Settings, error) { return ReadSettings(ctx, p) }
	}
	dir := Dir(opts.Paths)
	if err := openFolder(dir); err != nil {
		return nil, fmt.Errorf("open the scheduler's folder: %w", err)
	}
	b, err := openBook(filepath.Join(dir, "schedules"))
	if err != nil {
		return nil, err
	}
	box, err := send.OpenOutbox(filepath.Join(dir, "outbox"), opts.Clock.Now)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{opts: opts, clock: opts.Clock, log: opts.Logger, book: b, byID: map[string]*entry{}}
	all, bad, err := b.read()
	if err != nil {
		return nil, err
	}
	for _, e := range bad {
		s.log.Warn("a schedule's file isn't one: left as it is", slog.String("err", e.Error()))
	}
	for _, sc := range all {
		s.push(sc)
	}
	s.deliver = &send.Deliverer{Outbox: box, OnSent: s.sent, Logger: opts.Logger, RetryMin: opts.RetryMin, RetryMax: opts.RetryMax}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.deliver.Start(ctx)
	s.mu.Lock()
	s.arm()
	s.mu.Unlock()
	return s, nil
}

// SetTarget says where the agent's endpoint is; messages wait for it.
func (s *Scheduler) SetTarget(t send.Target) { s.deliver.SetTarget(t) }

// Close stops the timer and the sends under way; what is recorded stays
// for the next start.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
	s.mu.Unlock()
	s.cancel()
	s.deliver.Wait()
	return nil
}

// Idle is closed once no message is being sent and none waits but to be
// tried again (for tests and figures).
func (s *Scheduler) Idle() <-chan struct{} { return s.deliver.Idle() }

// sent is the deliverer's OnSent: a reminder the agent refused is
// logged (a thread it no longer answers); one received needs nothing.
func (s *Scheduler) sent(m send.Message, _ send.Result, err error) {
	if err != nil {
		s.log.Warn("a scheduled message wasn't received", slog.String("id", m.ID), slog.String("thread", m.Thread), slog.String("err", err.Error()))
	}
}

// ErrTooMany refuses a schedule past the agent's most.
var ErrTooMany = errors.New("too many schedules")

// Add makes and keeps the schedule req asks for, made by a call in
// thread whose message had hops. A request that breaks a rule, or one
// past the agent's most schedules, is refused naming the rule, nothing
// kept.
func (s *Scheduler) Add(ctx context.Context, req Request, thread string, hops int) (*Schedule, error) {
	set, err := s.opts.Settings(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := Make(req, thread, hops, set, s.clock.Now())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the scheduler is closing")
	}
	if len(s.byID) >= set.MaxSchedules {
		return nil, fmt.Errorf("%w: an agent has at most %d schedules at once (config.json's scheduler.max_schedules); cancel one first", ErrTooMany, set.MaxSchedules)
	}
	for s.byID[sc.ID] != nil {
		sc.ID = newID()
	}
	if err := s.book.write(sc); err != nil {
		return nil, err
	}
	s.push(sc)
	s.arm()
	copy := *sc
	return &copy, nil
}

// List is the schedules, soonest first.
func (s *Scheduler) List() []Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Schedule, 0, len(s.byID))
	for _, e := range s.byID {
		out = append(out, *e.s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Next.Equal(out[j].Next) {
			return out[i].Next.Before(out[j].Next)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ErrNoSchedule: no schedule has the id.
var ErrNoSchedule = errors.New("no such schedule")

// Cancel forgets schedule id: none of its occurrences is sent from now.
func (s *Scheduler) Cancel(id string) (Schedule, error) {
	if err := checkID(id); err != nil {
		return Schedule{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil {
		return Schedule{}, fmt.Errorf("%w: %s (schedules lists them)", ErrNoSchedule, id)
	}
	if err := s.book.remove(id); err != nil {
		return Schedule{}, err
	}
	heap.Remove(&s.queue, e.index)
	delete(s.byID, id)
	s.arm()
	return *e.s, nil
}

// entry is a schedule in the queue.
type entry struct {
	s     *Schedule
	index int
}

// queue is the schedules by their next occurrence, soonest first.
type queue []*entry

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].s.Next.Equal(q[j].s.Next) {
		return q[i].s.Next.Before(q[j].s.Next)
	}
	return q[i].s.ID < q[j].s.ID
}
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// push adds sc to the queue (under mu, or before the scheduler runs).
func (s *Scheduler) push(sc *Schedule) {
	e := &entry{s: sc}
	s.byID[sc.ID] = e
	heap.Push(&s.queue, e)
}

// arm sets the one timer for the soonest occurrence (under mu), at most
// maxSleep ahead; none when there is no schedule.
func (s *Scheduler) arm() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
	if s.closed || len(s.queue) == 0 {
		return
	}
	d := min(s.queue[0].s.Next.Sub(s.clock.Now()), maxSleep)
	s.stop = s.clock.AfterFunc(max(d, 0), s.wake)
}

// wake sends every occurrence due, then sets the timer again.
func (s *Scheduler) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.stop = nil
	now := s.clock.Now()
	for len(s.queue) > 0 && !s.queue[0].s.Next.After(now) {
		e := s.queue[0]
		if err := s.fire(e.s, now); err != nil {
			// Tried again at the next wake: the occurrence's id is the
			// same, so it is received once.
			s.log.Warn("send a scheduled message", slog.String("schedule", e.s.ID), slog.String("err", err.Error()))
			break
		}
		if e.s.Next.IsZero() {
			heap.Remove(&s.queue, e.index)
			delete(s.byID, e.s.ID)
		} else {
			heap.Fix(&s.queue, e.index)
		}
	}
	s.arm()
	if len(s.queue) > 0 && !s.queue[0].s.Next.After(now) && s.stop != nil {
		// A write failed: look again in a while, not at once.
		s.stop()
		s.stop = s.clock.AfterFunc(time.Second, s.wake)
	}
}

// fire sends sc's occurrence due (sc.Next) at now, under mu: its message
// is recorded in the outbox first, with the occurrence's id, then the
// schedule moves on to its next occurrence after now (the occurrences
// missed meanwhile sent as this one, late, or skipped), or is forgotten
// when it has none. A crash between the two sends the occurrence again
// at the next start, with the same id, which the harness stores once.
func (s *Scheduler) fire(sc *Schedule, now time.Time) error {
	due := sc.Next
	late := now.Sub(due) >= lateAfter
	if !(late && sc.Skip) {
		m := send.Message{
			ID:     occurrenceID(sc.ID, due),
			Since:  due,
			Thread: sc.Thread,
			From:   "schedule:" + sc.ID,
			Hops:   sc.Hops,
			Text:   sc.messageText(due, now),
		}
		// Its first try begins as it is recorded: the schedule moves on
		// only once it is, and a crash before sends it again, the same.
		if _, err := s.deliver.SendNow(m); err != nil {
			return err
		}
		if s.onFire != nil {
			s.onFire(sc, now)
		}
	}
	next, ok := sc.after(now)
	if !ok {
		if err := s.book.remove(sc.ID); err != nil {
			return err
		}
		if s.onMoved != nil {
			s.onMoved(sc)
		}
		sc.Next = time.Time{}
		return nil
	}
	moved := *sc
	moved.Next = next.UTC()
	if !(late && sc.Skip) {
		moved.Sent++
	}
	if err := s.book.write(&moved); err != nil {
		return err
	}
	*sc = moved
	if s.onMoved != nil {
		s.onMoved(sc)
	}
	return nil
}
