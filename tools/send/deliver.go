package send

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Deliverer sends what an Outbox holds to the agent, each message until
// the harness has it or refuses it, and forgets it then. It sends the
// messages recorded before a crash when it starts, a message added at
// once, and one that couldn't reach the agent again after a pause that
// doubles from RetryMin to RetryMax; while nothing waits it holds no
// timer.
type Deliverer struct {
	Outbox *Outbox
	// OnSent, when set, is told of each message sent or refused, once
	// for each time it is sent: a message whose try before a crash
	// reached the harness is told Result.Already. It runs on the
	// message's own goroutine.
	OnSent func(m Message, r Result, err error)
	// Logger says what failed; nil logs nothing.
	Logger *slog.Logger
	// RetryMin and RetryMax bound the pause before a message is tried
	// again (0: 250 ms and 30 s).
	RetryMin, RetryMax time.Duration
	// Parallel bounds the messages being sent at once (0: 8).
	Parallel int
	// Received, when set, is told of each message the harness has, before
	// it is forgotten from the outbox: the instant a test kills the
	// sender at, to prove the message is then received once.
	Received func(Message)

	mu      sync.Mutex
	target  *Target
	ctx     context.Context
	kick    chan struct{}
	pending map[string]Message       // the outbox's messages, read at Start and added by Send
	sending map[string]bool          // ids being sent now
	waiting map[string]time.Duration // ids to try again, and their last pause
	retryAt map[string]time.Time
	timer   *time.Timer
	wg      sync.WaitGroup
	sem     chan struct{}
	idle    []chan struct{}
}

// SetTarget says where the agent is; messages wait for it.
func (d *Deliverer) SetTarget(t Target) {
	d.mu.Lock()
	d.target = &t
	d.mu.Unlock()
	d.Kick()
}

// Start runs the deliverer until ctx ends; Wait waits for its last sends.
func (d *Deliverer) Start(ctx context.Context) {
	d.mu.Lock()
	d.ctx = ctx
	d.kick = make(chan struct{}, 1)
	d.pending = map[string]Message{}
	d.sending = map[string]bool{}
	d.waiting = map[string]time.Duration{}
	d.retryAt = map[string]time.Time{}
	n := d.Parallel
	if n <= 0 {
		n = 8
	}
	d.sem = make(chan struct{}, n)
	d.mu.Unlock()
	msgs, bad, err := d.Outbox.Pending()
	for _, e := range bad {
		d.log("a file of the outbox isn't a message: left as it is", e)
	}
	if err != nil {
		d.log("read the outbox", err)
	}
	d.mu.Lock()
	for _, m := range msgs {
		d.pending[m.ID] = m
	}
	d.mu.Unlock()
	d.wg.Add(1)
	go d.loop()
	d.Kick()
}

// Wait waits for the deliverer's loop and sends to end, once Start's
// context has.
func (d *Deliverer) Wait() { d.wg.Wait() }

// Send records m in the outbox and sends it as soon as it can: once
// Send returns, m is sent whatever crashes after.
func (d *Deliverer) Send(m Message) (Message, error) {
	m, err := d.Outbox.Add(m)
	if err != nil {
		return m, err
	}
	d.mu.Lock()
	if d.pending != nil {
		d.pending[m.ID] = m
	}
	d.mu.Unlock()
	d.Kick()
	return m, nil
}

// SendNow is Send with the message's first try begun at once, beside its
// record in the outbox rather than after it: for a message whose id
// says what it is (a schedule's occurrence), so that a crash before
// the record is made sends it again, the same, from where it came. The
// outbox forgets it only once it is recorded. Without a target yet it
// is Send.
func (d *Deliverer) SendNow(m Message) (Message, error) {
	d.mu.Lock()
	if d.target == nil || d.pending == nil || d.sending[m.ID] || m.ID == "" || m.Since.IsZero() {
		d.mu.Unlock()
		return d.Send(m)
	}
	t := *d.target
	d.pending[m.ID] = m
	d.sending[m.ID] = true
	recorded := make(chan error, 1)
	d.wg.Add(1)
	go d.send(t, m, recorded)
	d.mu.Unlock()
	m, err := d.Outbox.Add(m)
	recorded <- err
	return m, err
}

// Kick makes the deliverer look at its outbox now.
func (d *Deliverer) Kick() {
	d.mu.Lock()
	k := d.kick
	d.mu.Unlock()
	if k == nil {
		return
	}
	select {
	case k <- struct{}{}:
	default:
	}
}

// Idle returns a channel closed once nothing is being sent and nothing
// waits in the outbox to be sent but a message waiting to be tried again
// (for tests and figures).
func (d *Deliverer) Idle() <-chan struct{} {
	ch := make(chan struct{})
	d.mu.Lock()
	d.idle = append(d.idle, ch)
	d.mu.Unlock()
	d.Kick()
	return ch
}

func (d *Deliverer) loop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			d.mu.Lock()
			if d.timer != nil {
				d.timer.Stop()
			}
			d.mu.Unlock()
			return
		case <-d.kick:
		}
		d.pass()
	}
}

// pass starts sending each message of the outbox not being sent and not
// waiting to be tried again.
func (d *Deliverer) pass() {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	hasTarget := d.target != nil
	for _, m := range d.pending {
		if !hasTarget || d.sending[m.ID] {
			continue
		}
		if at, ok := d.retryAt[m.ID]; ok && now.Before(at) {
			continue
		}
		delete(d.retryAt, m.ID)
		d.sending[m.ID] = true
		d.wg.Add(1)
		go d.send(*d.target, m, nil)
	}
	if len(d.sending) == 0 && (len(d.pending) == len(d.retryAt) || !hasTarget) {
		for _, ch := range d.idle {
			close(ch)
		}
		d.idle = nil
	}
	d.arm()
}

// arm sets the one timer for the soonest try again, none when none waits.
func (d *Deliverer) arm() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	var soonest time.Time
	for _, at := range d.retryAt {
		if soonest.IsZero() || at.Before(soonest) {
			soonest = at
		}
	}
	if soonest.IsZero() {
		return
	}
	d.timer = time.AfterFunc(time.Until(soonest), d.Kick)
}

// send sends m, and forgets it once the harness has it or refuses it, or
// sets when it is tried again. recorded, when not nil, says whether m's
// record in the outbox, made meanwhile (SendNow), was: until then it is
// neither forgotten nor tried again, and one not recorded is left to
// whoever sent it to send again.
func (d *Deliverer) send(t Target, m Message, recorded <-chan error) {
	defer d.wg.Done()
	var r Result
	var err error
	select {
	case d.sem <- struct{}{}:
		r, err = Send(d.ctx, t, m)
		<-d.sem
	case <-d.ctx.Done():
		err = d.ctx.Err()
	}
	if recorded != nil {
		if rerr := <-recorded; rerr != nil {
			d.mu.Lock()
			delete(d.sending, m.ID)
			delete(d.pending, m.ID)
			d.mu.Unlock()
			return
		}
	}
	if d.ctx.Err() != nil && err == d.ctx.Err() {
		d.finish(m.ID, false)
		return
	}
	var e *Error
	final := err == nil || Refused(err) || (errors.As(err, &e) && e.Taken && d.ctx.Err() == nil)
	if !final {
		if d.ctx.Err() == nil {
			d.log("send message "+m.ID+" to "+m.Thread+": tried again later", err)
		}
		d.finish(m.ID, false)
		return
	}
	if err != nil {
		d.log("send message "+m.ID+" to "+m.Thread, err)
	} else if d.Received != nil {
		d.Received(m)
	}
	if derr := d.Outbox.Done(m.ID); derr != nil {
		// Sent again later, and answered already received then.
		d.log("forget a message sent", derr)
		d.finish(m.ID, false)
		return
	}
	if d.OnSent != nil {
		d.OnSent(m, r, err)
	}
	d.finish(m.ID, true)
}

// finish ends message id's send: done, or to be tried again after a
// pause.
func (d *Deliverer) finish(id string, done bool) {
	d.mu.Lock()
	delete(d.sending, id)
	if done {
		delete(d.pending, id)
		delete(d.waiting, id)
	} else if d.ctx.Err() == nil {
		lo, hi := d.RetryMin, d.RetryMax
		if lo <= 0 {
			lo = 250 * time.Millisecond
		}
		if hi <= 0 {
			hi = 30 * time.Second
		}
		pause := min(max(2*d.waiting[id], lo), hi)
		d.waiting[id] = pause
		d.retryAt[id] = time.Now().Add(pause)
	}
	d.mu.Unlock()
	d.Kick()
}

func (d *Deliverer) log(msg string, err error) {
	if d.Logger != nil {
		d.Logger.LogAttrs(context.Background(), slog.LevelWarn, msg, slog.String("err", err.Error()))
	}
}
