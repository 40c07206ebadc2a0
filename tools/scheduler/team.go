package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Team carries an agent's subagents' tasks and its messages to its
// teammates (the jobs of team_job.go): each sent to an agent's endpoint
// as Link's bridge sends a message, its answer brought back into the
// conversation that asked as a message from task:<id> or agent:<name>,
// which the agent then answers (an answer nobody waits for, kept for
// the owner: _link/recover, lnk agent chat).
type Team struct {
	cfg  TeamConfig
	jobs jobs

	mu      sync.Mutex
	running map[string]*job // by id: every job not done
	tasks   map[string]*job // by their conversation: the latest task's, running or done
	lanes   map[string]*lane
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// TeamConfig is what a Team is made of. Agent, Dir, Self, Sender and
// Settings are needed.
type TeamConfig struct {
	// Agent is the name of the agent whose team it is.
	Agent string
	// Dir is the scheduler's folder in the agent's home
	// (<home>/scheduler); its jobs are in Dir/jobs.
	Dir string
	// Self is where the agent's own harness answers: a task runs there,
	// and every answer comes back there.
	Self func(ctx context.Context) (Endpoint, error)
	// Teammates finds the owner's other agents; nil is none.
	Teammates Teammates
	// Sender sends each message once.
	Sender Sender
	// Settings reads the agent's scheduler settings, at each call.
	Settings func(ctx context.Context) (TeamSettings, error)
	// KeptFor is how long the answer of a message stored before a crash
	// is looked for among those kept, before the parent is told none
	// came; 0 is 30 minutes.
	KeptFor time.Duration
	// Retry is the first wait before a message that couldn't be sent is
	// tried again, doubled at each try up to a minute; 0 is a second.
	Retry time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger gets what goes wrong outside a call's answer; nil logs
	// nothing.
	Logger *slog.Logger
	// Done, when not nil, is told each job (task:<id>, agent:<id>) once
	// its answer is brought back: for measures.
	Done func(from string)
}

// TeamSettings are the agent's settings of its team (config.json's
// "scheduler").
type TeamSettings struct {
	// MaxTasks is how many of the agent's tasks run at once (DefaultMaxTasks).
	MaxTasks int
}

// Bounds of a team.
const (
	// DefaultMaxTasks is how many tasks an agent runs at once unless its
	// settings say.
	DefaultMaxTasks = 8
	// MaxMaxTasks is the most its settings may say.
	MaxMaxTasks = 64
	// MaxHops bounds the hops of a message the scheduler sends for a
	// call: a call answering a message MaxHops-1 hops away is refused,
	// so two agents (or tasks) sending to each other stop there.
	MaxHops = 8
)

// Endpoint is where an agent's harness answers and how it is reached.
type Endpoint struct {
	URL     string // its ACP address: http://127.0.0.1:18800/acp
	Key     []byte // its endpoint key
	Agent   string // its name, said as Link-Agent
	AgentID string // its ID, said as Link-Agent-Id when not ""
}

// Message is one message a Sender sends.
type Message struct {
	ID     string    // the message's id, the same at every try (contract.MessageMeta)
	Since  time.Time // when it was first recorded
	Thread string
	Text   string
	From   string // schedule:<id>, task:<id>, agent:<name>
	Hops   int
	Tools  *[]string // the tools its conversation has from now on; nil says none
	Model  string    // the model its conversation runs on from now on; "" says none
}

// Kept is an answer nobody took, kept at an endpoint for _link/recover's
// two phases.
type Kept struct {
	ID, Thread, Text string
}

// Sender sends messages to an agent's endpoint, each stored there once
// however often it is sent (tools/send).
type Sender interface {
	// Ask sends m and waits for its turn's answer. A message stored there
	// already is ErrReceived: its answer went where the first's went.
	Ask(ctx context.Context, to Endpoint, m Message) (string, error)
	// Tell sends m and returns once it is stored, its answer left to be
	// kept for the owner. A message stored already is ErrReceived.
	Tell(ctx context.Context, to Endpoint, m Message) error
	// Kept is thread's answers kept at to for _link/recover, in two
	// phases; Done lets those of ids go.
	Kept(ctx context.Context, to Endpoint, thread string) ([]Kept, error)
	Done(ctx context.Context, to Endpoint, ids []string) error
}

// Errors a Sender answers with.
var (
	// ErrReceived is a message the harness stored already.
	ErrReceived = errors.New("the message was received already")
	// ErrRefused wraps a refusal by the harness of the message itself (a
	// rule it broke, an agent it doesn't answer): sent again it would be
	// refused again.
	ErrRefused = errors.New("refused")
	// ErrFailed wraps a turn that failed: the harness had the message,
	// and its turn ended in an error, with no answer.
	ErrFailed = errors.New("its turn failed")
)

// Teammates finds the agents of the owner on this machine.
type Teammates interface {
	// Teammate is the endpoint of the agent named name, or an error
	// wrapping ErrNoTeammate when the owner has no such agent here.
	Teammate(ctx context.Context, name string) (Endpoint, error)
	// Names are the owner's agents here.
	Names(ctx context.Context) ([]string, error)
}

// ErrNoTeammate is a name that isn't one of the owner's agents here.
var ErrNoTeammate = errors.New("no such agent of the owner's on this machine")

// NewTeam makes the team of cfg's agent, reading its jobs again; Start
// carries them on.
func NewTeam(cfg TeamConfig) (*Team, error) {
	switch {
	case cfg.Agent == "":
		return nil, errors.New("team: no agent")
	case cfg.Dir == "":
		return nil, errors.New("team: no folder")
	case cfg.Self == nil || cfg.Sender == nil || cfg.Settings == nil:
		return nil, errors.New("team: no endpoint, sender or settings")
	}
	if cfg.KeptFor <= 0 {
		cfg.KeptFor = 30 * time.Minute
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Team{cfg: cfg, jobs: jobs{dir: filepath.Join(cfg.Dir, "jobs")}, running: map[string]*job{}, tasks: map[string]*job{}, lanes: map[string]*lane{}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// Start reads the jobs left from before (set aside, said in the log,
// those that don't read) and carries each on from where it was.
func (t *Team) Start() error {
	all, bad, err := t.jobs.load()
	for _, e := range bad {
		t.cfg.Logger.Warn("team", "err", e.Error())
	}
	if err != nil {
		return err
	}
	t.mu.Lock()
	for _, j := range all {
		if j.Kind == kindTask {
			t.index(j)
		}
		if _, ok := t.running[j.ID]; !ok && j.Stage != stageDone {
			t.running[j.ID] = j
			t.goRun(j)
		}
	}
	t.mu.Unlock()
	t.prune()
	return nil
}

// Close stops carrying jobs on, each left where it was for the next
// start, and waits for them.
func (t *Team) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	return nil
}

// overLimit is a job refused because too many run at once, saying so.
type overLimit string

func (o overLimit) Error() string { return string(o) }

// add stores j and starts carrying it, unless the team is closed, or
// maxTasks tasks (for a task) or maxJobs jobs run already: counted and
// added under one lock, so calls at once never pass the limit together.
func (t *Team) add(j *job, maxTasks int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("the scheduler is stopping")
	}
	tasks := 0
	for _, r := range t.running {
		if r.Kind == kindTask {
			tasks++
		}
	}
	switch {
	case j.Kind == kindTask && tasks >= maxTasks:
		return overLimit(fmt.Sprintf("the agent runs at most %d tasks at once (config.json's scheduler.max_tasks), and %d are running: wait for an answer first", maxTasks, tasks))
	case len(t.running) >= maxJobs:
		return overLimit(fmt.Sprintf("the scheduler carries at most %d tasks and messages at once", maxJobs))
	}
	if err := t.jobs.save(j); err != nil {
		return err
	}
	t.running[j.ID] = j
	if j.Kind == kindTask {
		t.index(j)
	}
	t.goRun(j)
	return nil
}

// goRun carries j on in a goroutine of its own; t.mu is held.
func (t *Team) goRun(j *job) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.run(t.ctx, j)
	}()
}

// snapshot is a copy of every job not done, oldest first.
func (t *Team) snapshot() []job {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]job, 0, len(t.running))
	for _, j := range t.running {
		out = append(out, *j)
	}
	sortJobs(out)
	return out
}

// run carries j through its stages until it is done or the team closes
// (its goroutine alone changes j, under t.mu, so snapshot reads it whole):
// its message sent and its answer had (from the endpoint's kept answers
// when it was stored before a crash), alone in flight in its thread;
// then that answer told to the parent, each step saved before the next.
// An answer told into a task's conversation is asked there instead, and
// the task's answer to it carried on up to that task's parent (up).
func (t *Team) run(ctx context.Context, j *job) {
	if j.Stage == stageAsking || j.Stage == stageKept {
		release, ok := t.lane(ctx, j.Teammate+"|"+j.Thread)
		if !ok {
			return
		}
		ok = t.retry(ctx, j, func() error { return t.step(ctx, j) }, func() bool { return j.Stage == stageAnswered })
		release()
		if !ok {
			return
		}
	}
	for !j.over() {
		rec := t.taskOf(j.to())
		if rec == nil || rec.ID == j.ID || j.Ups >= MaxHops {
			t.retry(ctx, j, func() error { return t.step(ctx, j) }, j.over)
			return
		}
		// Into a task's conversation: alone in flight there, so that
		// task's answer kept after a crash is known to be to this one.
		release, ok := t.lane(ctx, "|"+j.to())
		if !ok {
			return
		}
		from := j.to()
		ok = t.retry(ctx, j, func() error { return t.up(ctx, j, rec) }, func() bool { return j.over() || j.to() != from })
		release()
		if !ok {
			return
		}
	}
}

// retry runs step until done says so, waiting longer after each failure
// (up to a minute; 5 s for an answer not kept yet): false when the team
// closed first.
func (t *Team) retry(ctx context.Context, j *job, step func() error, done func() bool) bool {
	wait := t.cfg.Retry
	for ctx.Err() == nil {
		err := step()
		if err == nil {
			wait = t.cfg.Retry
			if done() {
				return true
			}
			continue
		}
		if ctx.Err() != nil {
			return false
		}
		most := time.Minute
		if errors.Is(err, errNotYet) {
			// Looked for again soon: the turn's end is near.
			most = 5 * time.Second
		} else {
			t.cfg.Logger.Warn("team", "job", j.from(), "stage", j.Stage, "err", err.Error(), "retry", wait)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
	return false
}

// lane waits until the job is the one of this agent's in flight in a
// thread (key: the teammate, "|" and the thread: a teammate's
// conversation with this agent, a task's), so an answer kept there after
// a crash is known to be its; release lets the next go.
func (t *Team) lane(ctx context.Context, key string) (release func(), ok bool) {
	t.mu.Lock()
	l := t.lanes[key]
	if l == nil {
		l = &lane{ch: make(chan struct{}, 1)}
		t.lanes[key] = l
	}
	l.users++
	t.mu.Unlock()
	leave := func() {
		t.mu.Lock()
		if l.users--; l.users == 0 {
			delete(t.lanes, key)
		}
		t.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, false
	}
	return func() { <-l.ch; leave() }, true
}

// lane is one thread's turn to send: ch holds the job in flight, users
// counts those in it or waiting for it.
type lane struct {
	ch    chan struct{}
	users int
}

// step takes j one stage on, saving it; a job done has Stage "".
func (t *Team) step(ctx context.Context, j *job) error {
	switch j.Stage {
	case stageAsking:
		to, err := t.target(ctx, j)
		if err != nil {
			if errors.Is(err, ErrNoTeammate) {
				return t.answered(j, "The message couldn't be sent: "+err.Error()+".", true)
			}
			return err
		}
		answer, err := t.cfg.Sender.Ask(ctx, to, t.askMessage(j))
		switch {
		case errors.Is(err, ErrReceived):
			t.mu.Lock()
			j.Stage, j.KeptSince = stageKept, t.cfg.Now().UTC()
			t.mu.Unlock()
			return t.jobs.save(j)
		case errors.Is(err, ErrRefused):
			return t.answered(j, "The message was refused: "+err.Error()+".", true)
		case errors.Is(err, ErrFailed):
			return t.answered(j, "No answer: "+err.Error()+".", true)
		case err != nil:
			return err
		}
		return t.answered(j, answer, false)
	case stageKept:
		to, err := t.target(ctx, j)
		if err != nil {
			return err
		}
		return t.fromKept(ctx, to, j)
	case stageAnswered:
		self, err := t.cfg.Self(ctx)
		if err != nil {
			return err
		}
		err = t.cfg.Sender.Tell(ctx, self, Message{ID: j.replyID(), Since: j.Since, Thread: j.to(), Text: j.Answer, From: j.from(), Hops: j.hops()})
		switch {
		case errors.Is(err, ErrRefused):
			// The parent's conversation refuses it: told again it would
			// refuse it again, so it is said in the log and let go.
			t.cfg.Logger.Error("team: an answer couldn't be brought back", "job", j.from(), "parent", j.to(), "err", err.Error())
		case err != nil && !errors.Is(err, ErrReceived):
			return err
		}
		return t.finish(j)
	}
	return fmt.Errorf("job %s: stage %q", j.ID, j.Stage)
}

// target is where j's message goes: the agent's own endpoint for a task,
// the teammate's for a message to one.
func (t *Team) target(ctx context.Context, j *job) (Endpoint, error) {
	if j.Kind == kindTask {
		return t.cfg.Self(ctx)
	}
	if t.cfg.Teammates == nil {
		return Endpoint{}, fmt.Errorf("agent %s: %w", j.Teammate, ErrNoTeammate)
	}
	return t.cfg.Teammates.Teammate(ctx, j.Teammate)
}

// askMessage is j's message to its thread.
func (t *Team) askMessage(j *job) Message {
	m := Message{ID: j.askID(), Since: j.Since, Thread: j.Thread, Text: j.Text, Hops: j.Hops + 1, Tools: j.Tools, Model: j.Model}
	if j.Kind == kindTask {
		m.From = "task:" + j.ID
	} else {
		m.From = "agent:" + t.cfg.Agent
	}
	return m
}

// answered keeps j's answer (cut past MaxReplyText, saying so) and moves
// it to its last stage.
func (t *Team) answered(j *job, answer string, failed bool) error {
	t.mu.Lock()
	j.Answer, j.Failed, j.Stage = cut(answer), failed, stageAnswered
	t.mu.Unlock()
	return t.jobs.save(j)
}

// utf8RuneStart says whether b starts a character.
func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// fromKept takes j's answer from those kept at to: its message was
// stored before a crash (of the harness or of the scheduler), so its
// turn's answer, finished since or finished after the harness started
// again, is kept for _link/recover in j's thread. Every answer kept in
// that thread is j's (a task's thread is its own; a teammate's has one
// message of this agent's in flight at a time), joined in order, then
// let go. None yet is an error, so it is looked for again later.
func (t *Team) fromKept(ctx context.Context, to Endpoint, j *job) error {
	text, ids, err := t.kept(ctx, to, j.Thread, j.KeptSince)
	if errors.Is(err, errGaveUp) {
		return t.answered(j, "No answer: "+err.Error()+".", true)
	}
	if err != nil {
		return err
	}
	if err := t.answered(j, text, false); err != nil {
		return err
	}
	t.letGo(ctx, to, j, ids)
	return nil
}

// kept is the answers kept at to in thread, joined in order, and their
// ids: errNotYet when there are none, errGaveUp when there are none
// KeptFor after since.
func (t *Team) kept(ctx context.Context, to Endpoint, thread string, since time.Time) (string, []string, error) {
	all, err := t.cfg.Sender.Kept(ctx, to, thread)
	if err != nil {
		return "", nil, err
	}
	var text, ids []string
	for _, k := range all {
		text = append(text, k.Text)
		ids = append(ids, k.ID)
	}
	if len(ids) == 0 {
		if !since.IsZero() && t.cfg.Now().Sub(since) > t.cfg.KeptFor {
			return "", nil, fmt.Errorf("%w %v later", errGaveUp, t.cfg.KeptFor)
		}
		return "", nil, errNotYet
	}
	return joinAnswers(text), ids, nil
}

// errGaveUp is an answer never kept, its turn cut short.
var errGaveUp = errors.New("its turn was cut short (a crash) and hadn't finished")

// letGo lets the answers of ids go once j saved them: those left kept
// are passed over.
func (t *Team) letGo(ctx context.Context, to Endpoint, j *job, ids []string) {
	if err := t.cfg.Sender.Done(ctx, to, ids); err != nil {
		t.cfg.Logger.Warn("team: kept answers not let go", "job", j.from(), "err", err.Error())
	}
}

// errNotYet is a job whose answer isn't kept yet.
var errNotYet = errors.New("its answer isn't kept yet: its turn is still running")

// joinAnswers joins the answers of one thread, in order.
func joinAnswers(text []string) string { return strings.Join(text, "\n\n") }
