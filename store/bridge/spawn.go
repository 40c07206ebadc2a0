package bridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
)

// ChildConfig says how to start a store bridge as a child process (a
// driver's plugin, lnk-<name> serve) and reach it on its unix socket.
type ChildConfig struct {
	// Path is the program to run and Args its arguments, which make it
	// listen on Socket and read the agent's key from its standard input.
	Path string
	Args []string
	// Env is the child's environment; nil is this process's.
	Env []string
	// Socket is the unix socket the child listens on.
	Socket string
	// Key is the agent's key: written to the child's standard input, and
	// proving each call.
	Key []byte
	// Start bounds how long the child may take to say it listens (its
	// first line of output); DefaultChildStart if zero.
	Start time.Duration
	// Backoff is the least time between one start and the next after the
	// child died; it doubles for each start in a row that failed or died
	// within a minute, up to MaxChildBackoff. DefaultChildBackoff if zero.
	Backoff time.Duration
	// Timeout stops each call past it; DefaultTimeout if zero.
	Timeout time.Duration
	// Logger gets the child's error output, a line at a time, and its
	// ends; nothing is logged if nil.
	Logger *slog.Logger
}

// The child's bounds.
const (
	DefaultChildStart   = 15 * time.Second
	DefaultChildBackoff = 100 * time.Millisecond
	MaxChildBackoff     = 5 * time.Second
	// childStop is how long Close lets the child end after SIGTERM before
	// it kills it.
	childStop = 5 * time.Second
	// childShortLife: a child that died sooner after its start counts as
	// a start that failed, for the backoff.
	childShortLife = time.Minute
)

// Validate says what of the config is wrong.
func (c ChildConfig) Validate() error {
	if c.Path == "" {
		return errors.New("store bridge child: no program")
	}
	if c.Start < 0 || c.Backoff < 0 || c.Timeout < 0 {
		return errors.New("store bridge child: a negative time")
	}
	return Config{Network: "unix", Address: c.Socket, Key: c.Key}.Validate()
}

// Child is a store.Conversations run by a store bridge in a child process:
// started on the first call, started again at the next call once it died
// (after a backoff), and stopped by Close. A call whose child died under
// it is sent once more to the child started again; every call is safe to
// send again, an append that landed being taken as written.
type Child struct {
	cfg  ChildConfig
	lock chan struct{} // held while a call finds or starts the child

	keepMu   sync.Mutex
	stopKeep context.CancelFunc // ends Keep's watch; nil until Keep
	kept     chan struct{}      // closed once Keep's watch has ended

	// Under lock:
	run      *childRun
	failures int       // starts in a row that failed or died young
	next     time.Time // no start before
	closed   bool
}

var (
	_ store.Conversations = (*Child)(nil)
	_ store.LatestReader  = (*Child)(nil)
	_ store.Closer        = (*Child)(nil)
)

// childRun is one start of the child.
type childRun struct {
	cmd     *exec.Cmd
	client  *Client
	started time.Time
	exited  chan struct{} // closed once it has exited
	err     error         // how it exited, once exited
	tail    *tailBuffer   // the last of its error output
}

// NewChild checks cfg and makes the child, not yet started.
func NewChild(cfg ChildConfig) (*Child, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Start == 0 {
		cfg.Start = DefaultChildStart
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultChildBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Child{cfg: cfg, lock: make(chan struct{}, 1)}, nil
}

// Pid is the running child's process id, 0 when none runs.
func (c *Child) Pid() int {
	c.lock <- struct{}{}
	defer func() { <-c.lock }()
	if c.run == nil || c.run.done() {
		return 0
	}
	return c.run.cmd.Process.Pid
}

// Append writes e as the thread's event e.Seq through the child.
func (c *Child) Append(ctx context.Context, thread string, e store.Event) error {
	return c.call(ctx, func(cl *Client) error { return cl.Append(ctx, thread, e) })
}

// Read returns the thread's events numbered from and after.
func (c *Child) Read(ctx context.Context, thread string, from int64) (es []store.Event, err error) {
	err = c.call(ctx, func(cl *Client) error {
		es, err = cl.Read(ctx, thread, from)
		return err
	})
	return es, err
}

// Latest returns the thread's last n events.
func (c *Child) Latest(ctx context.Context, thread string, n int) (es []store.Event, err error) {
	err = c.call(ctx, func(cl *Client) error {
		es, err = cl.Latest(ctx, thread, n)
		return err
	})
	return es, err
}

// Lease takes or renews the thread's lease for holder.
func (c *Child) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (l store.Lease, err error) {
	err = c.call(ctx, func(cl *Client) error {
		l, err = cl.Lease(ctx, thread, holder, ttl)
		return err
	})
	return l, err
}

// Release lets holder's lease of the thread go.
func (c *Child) Release(ctx context.Context, thread, holder string) error {
	return c.call(ctx, func(cl *Client) error { return cl.Release(ctx, thread, holder) })
}

// call makes one call through the running child, starting it if none
// runs; when the child died under the call, once more through the child
// started again.
func (c *Child) call(ctx context.Context, fn func(*Client) error) error {
	run, err := c.running(ctx)
	if err != nil {
		return err
	}
	err = fn(run.client)
	if err == nil || ctx.Err() != nil || answered(err) || !run.exitedWithin(200*time.Millisecond) {
		return err
	}
	again, serr := c.running(ctx)
	if serr != nil {
		return fmt.Errorf("%w (the store bridge died under the call: %w)", err, serr)
	}
	return fn(again.client)
}

// answered says whether err is the bridge's own answer (a driver's
// refusal, or the proof's), which says the child was there.
func answered(err error) bool {
	var re *remoteError
	return errors.As(err, &re) || errors.Is(err, ErrRefused)
}

// running gives the child running, starting it when none runs.
func (c *Child) running(ctx context.Context) (*childRun, error) {
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.lock }()
	if c.closed {
		return nil, errors.New("store bridge child: closed")
	}
	if c.run != nil && !c.run.done() {
		return c.run, nil
	}
	if old := c.run; old != nil {
		c.run = nil
		old.client.Close()
		lived := time.Since(old.started)
		c.cfg.Logger.Warn("store bridge ended", "program", c.cfg.Path, "pid", old.cmd.Process.Pid, "after", lived.Round(time.Millisecond), "err", old.err, "said", old.tail.String())
		if lived < childShortLife {
			c.failures++
		} else {
			c.failures = 0
		}
		c.next = old.started.Add(c.backoff())
	}
	if wait := time.Until(c.next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	run, err := c.start(ctx)
	if err != nil {
		c.failures++
		c.next = time.Now().Add(c.backoff())
		return nil, err
	}
	c.run = run
	return run, nil
}

// backoff is the wait before the next start after c.failures in a row.
func (c *Child) backoff() time.Duration {
	d := c.cfg.Backoff
	for i := 1; i < c.failures && d < MaxChildBackoff; i++ {
		d *= 2
	}
	return min(d, MaxChildBackoff)
}

// start starts the child, waits (bounded) for its first line, which says
// it listens, and dials it.
func (c *Child) start(ctx context.Context) (*childRun, error) {
	cmd := exec.Command(c.cfg.Path, c.cfg.Args...)
	cmd.Env = c.cfg.Env
	cmd.Stdin = bytes.NewReader(append(append([]byte(nil), c.cfg.Key...), '\n'))
	childAttrs(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	name := c.cfg.Path + " " + strings.Join(c.cfg.Args, " ")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start store bridge %s: %w", name, err)
	}
	run := &childRun{cmd: cmd, started: time.Now(), exited: make(chan struct{}), tail: &tailBuffer{}}
	line := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			close(line)
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			run.tail.add(sc.Text())
			c.cfg.Logger.Info("store bridge", "pid", cmd.Process.Pid, "said", sc.Text())
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		wg.Wait() // the pipes are read to their end before Wait closes them
		run.err = cmd.Wait()
		close(run.exited)
	}()
	fail := func(err error) (*childRun, error) {
		cmd.Process.Kill()
		<-run.exited
		if said := run.tail.String(); said != "" {
			err = fmt.Errorf("%w: it said: %s", err, said)
		}
		return nil, fmt.Errorf("start store bridge %s: %w", name, err)
	}
	t := time.NewTimer(c.cfg.Start)
	defer t.Stop()
	select {
	case <-line:
	case <-run.exited:
		return fail(fmt.Errorf("it ended before it listened (%v)", run.err))
	case <-t.C:
		return fail(fmt.Errorf("it didn't listen within %v", c.cfg.Start))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	cl, err := Dial(ctx, Config{Network: "unix", Address: c.cfg.Socket, Key: c.cfg.Key, Timeout: c.cfg.Timeout})
	if err != nil {
		return fail(err)
	}
	run.client = cl
	return run, nil
}

// done says whether the run has exited.
func (r *childRun) done() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// exitedWithin says whether the run exits within d: a call that broke
// because the child died sees it exit at once.
func (r *childRun) exitedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.exited:
		return true
	case <-t.C:
		return false
	}
}

// Keep starts the child now, and again each time it ends (after the
// backoff, as a call would), until Close: a store bridge others reach at
// its socket, which no call of this process's starts. It gives the first
// start's error, and then keeps nothing running. Called once.
func (c *Child) Keep(ctx context.Context) error {
	run, err := c.running(ctx)
	if err != nil {
		return err
	}
	watch, stop := context.WithCancel(context.WithoutCancel(ctx))
	kept := make(chan struct{})
	c.keepMu.Lock()
	c.stopKeep, c.kept = stop, kept
	c.keepMu.Unlock()
	go func() {
		defer close(kept)
		for {
			select {
			case <-run.exited:
			case <-watch.Done():
				return
			}
			for {
				if run, err = c.running(watch); err == nil {
					break
				}
				if watch.Err() != nil {
					return
				}
				c.cfg.Logger.Warn("store bridge not started again", "program", c.cfg.Path, "err", err)
			}
		}
	}()
	return nil
}

// Close stops the child, asking first (SIGTERM) and killing it if it
// hasn't ended within 5 s, and waits for it. Calls after it are refused.
func (c *Child) Close() error {
	c.keepMu.Lock()
	stop, kept := c.stopKeep, c.kept
	c.keepMu.Unlock()
	if stop != nil {
		stop()
		<-kept
	}
	c.lock <- struct{}{}
	defer func() { <-c.lock }()
	c.closed = true
	run := c.run
	c.run = nil
	if run == nil {
		return nil
	}
	run.client.Close()
	if run.done() {
		return nil
	}
	stopChild(run.cmd)
	t := time.NewTimer(childStop)
	defer t.Stop()
	select {
	case <-run.exited:
	case <-t.C:
		run.cmd.Process.Kill()
		<-run.exited
		return fmt.Errorf("stop store bridge %s: killed after %v", c.cfg.Path, childStop)
	}
	return nil
}

// tailBuffer keeps the last lines a child wrote to its error output, at
// most 2 KiB, for the error that says why it ended.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

const maxTail = 2 << 10

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) > 0 {
		t.b = append(t.b, " | "...)
	}
	t.b = append(t.b, line...)
	if len(t.b) > maxTail {
		t.b = append(t.b[:0], t.b[len(t.b)-maxTail:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
