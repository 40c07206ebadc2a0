package background

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/fsx"
)

// Teller tells a conversation a command's end: in lnk, a message sent to
// the agent's endpoint from run:<ID>. Tell may be called again with the
// same Message after a crash before its told file was written, so it
// must keep it once (the sender's outbox, keyed by the message's id).
type Teller interface {
	Tell(ctx context.Context, m Message) error
}

// ErrUntellable is a Teller's answer for a message no telling can carry
// (one its sender refuses whatever the agent): the end is then marked
// told, and said in the log, not tried again each sweep.
var ErrUntellable = errors.New("the end can't be told")

// Message is a command's end as told to the conversation that started it.
type Message struct {
	ID     string // the command's: the message is from run:<ID>
	Thread string // the conversation that started it
	Hops   int    // the hops of the message whose turn started it
	Text   string // what it says, for the model
	// Since is when it ended (when it started, for one lost): the same at
	// every telling, so a sender keys the message by it and its ID.
	Since time.Time
}

// Options are a Manager's.
type Options struct {
	// Dir is where commands are kept: <home>/run, made 0700.
	Dir string
	// Exe is the program started as each command's supervisor, with
	// SupervisorArg, asked at each start (the program may be found while
	// the server runs); /proc/self/exe unless said.
	Exe func() string
	// Teller tells each command's end.
	Teller Teller
	// Logger gets what goes wrong outside a call (nil logs nothing).
	Logger *slog.Logger
	// MaxRunning bounds the commands running at once (16 unless said).
	MaxRunning int
	// KeepOutput is how many bytes of a command's latest output are kept
	// (8 MiB unless said).
	KeepOutput int64
	// KeepEnded is how many ended commands are kept for run__list and
	// run__read, the latest (100 unless said).
	KeepEnded int
	// Grace is how long a stop waits after SIGTERM before SIGKILL (a
	// second unless said).
	Grace time.Duration
	// Poll is how often commands this process didn't start are looked at
	// (a second unless said).
	Poll time.Duration
	// Now is the clock (time.Now unless said).
	Now func() time.Time
}

// Manager starts, lists, reads and stops an agent's background commands,
// and tells each one's end. Everything of a command is on disk, so a
// Manager opened on the folder of one that died picks up where it was.
type Manager struct {
	opts   Options
	mu     sync.Mutex // held to count the running and start one
	told   sync.Map   // ids whose told file was seen, so never looked at again
	nudge  chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// Open opens the commands kept in opts.Dir, making it, and starts
// watching them: an end found (one while no server ran, or a command
// lost) is told at once.
func Open(opts Options) (*Manager, error) {
	if opts.Teller == nil {
		return nil, errors.New("background: no teller for the commands' ends")
	}
	if opts.Exe == nil {
		opts.Exe = func() string { return "/proc/self/exe" }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = 16
	}
	if opts.KeepOutput <= 0 {
		opts.KeepOutput = 8 << 20
	}
	if opts.KeepEnded <= 0 {
		opts.KeepEnded = 100
	}
	if opts.Grace <= 0 {
		opts.Grace = time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("background: %w", err)
	}
	if err := os.Chmod(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("background: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, nudge: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go m.watch(ctx)
	return m, nil
}

// Close stops watching; the commands run on, their supervisors their
// own, and a Manager opened later tells their ends.
func (m *Manager) Close() error {
	m.cancel()
	<-m.done
	return nil
}

// watch looks at every command not yet told, each Poll and when one this
// process started ends, telling those that ended, until ctx ends.
func (m *Manager) watch(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(m.opts.Poll)
	defer t.Stop()
	for {
		m.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.nudge:
		}
	}
}

// wake makes watch look again now.
func (m *Manager) wake() {
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// sweep looks at every command not yet told once, then removes the
// oldest ended past KeepEnded.
func (m *Manager) sweep(ctx context.Context) {
	ids, err := m.ids()
	if err != nil {
		m.opts.Logger.Warn("background: list", "err", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if _, ok := m.told.Load(id); ok {
			continue
		}
		if err := m.tellIfEnded(ctx, id); err != nil && ctx.Err() == nil {
			m.opts.Logger.Warn("background: tell an end", "id", id, "err", err)
		}
	}
	m.prune()
	m.removeUnmade()
}

// ids lists the commands' folders.
func (m *Manager) ids() ([]string, error) {
	ents, err := os.ReadDir(m.opts.Dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && validID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// removeUnmade removes the folders of commands whose start a crash cut
// short before they had an id: nothing of them was started.
func (m *Manager) removeUnmade() {
	ents, err := os.ReadDir(m.opts.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), newPrefix) {
			continue
		}
		// job.json is written once its lock is held: with one, the lock
		// says whether its maker lives; without, the lock may be being
		// taken, and only one a minute old is taken for a crash's.
		dir := filepath.Join(m.opts.Dir, e.Name())
		if exists(filepath.Join(dir, jobFile)) {
			if unlock, got, _ := tryLock(dir); got {
				os.RemoveAll(dir)
				unlock()
			}
			continue
		}
		if info, err := e.Info(); err == nil && m.opts.Now().Sub(info.ModTime()) > time.Minute {
			os.RemoveAll(dir)
		}
	}
}

// dir is command id's folder.
func (m *Manager) dir(id string) string { return filepath.Join(m.opts.Dir, id) }

// tellIfEnded tells command id's end if it ended and wasn't told: under its
// lock, which a living supervisor holds (then there is nothing to do) and
// which keeps another server from telling it at once.
func (m *Manager) tellIfEnded(ctx context.Context, id string) error {
	dir := m.dir(id)
	if exists(filepath.Join(dir, toldFile)) {
		m.told.Store(id, true)
		return nil
	}
	unlock, got, err := tryLock(dir)
	if err != nil || !got {
		return err
	}
	defer unlock()
	if exists(filepath.Join(dir, toldFile)) {
		m.told.Store(id, true)
		return nil
	}
	var job Job
	if err := readJSON(filepath.Join(dir, jobFile), &job); err != nil {
		if errors.Is(err, errNone) {
			// Its maker died before writing it: nothing was started.
			return os.RemoveAll(dir)
		}
		// No conversation to tell: the folder is kept as it is, said once.
		m.opts.Logger.Warn("background: a command's job.json doesn't read; its end is told to no one", "id", id, "err", err)
		return m.markTold(id)
	}
	end, status, err := m.endOf(dir)
	if err != nil {
		end, status = End{Exit: -1, Error: err.Error()}, Lost
	}
	if status == Ended && end.Stopped {
		// run__stop asked for it and answers how it ended.
		return m.markTold(id)
	}
	msg := Message{ID: id, Thread: job.Thread, Hops: job.Hops, Text: endText(job, end, status, dir), Since: end.Ended}
	if msg.Since.IsZero() {
		msg.Since = job.Started
	}
	if err := m.opts.Teller.Tell(ctx, msg); err != nil {
		if !errors.Is(err, ErrUntellable) {
			return err
		}
		m.opts.Logger.Warn("background: a command's end is told to no one", "id", id, "err", err)
	}
	return m.markTold(id)
}

// markTold writes command id's told file.
func (m *Manager) markTold(id string) error {
	if err := fsx.Replace(filepath.Join(m.dir(id), toldFile), nil, true); err != nil {
		return err
	}
	m.told.Store(id, true)
	return nil
}

// endOf is how the command in dir ended (Ended), or Lost, read when its
// lock is free.
func (m *Manager) endOf(dir string) (End, Status, error) {
	var end End
	err := readJSON(filepath.Join(dir, endFile), &end)
	switch {
	case errors.Is(err, errNone):
		return End{}, Lost, nil
	case err != nil:
		return End{}, Lost, err
	}
	return end, Ended, nil
}

// Info is a command as run__list and the others say it.
type Info struct {
	ID      string
	Thread  string
	Command string
	Started time.Time
	Status  Status
	End     End   // when Ended
	Output  int64 // bytes of output so far
}

// info reads command id's state.
func (m *Manager) info(id string) (Info, error) { return m.infoWith(id, lockHeld) }

// infoWith reads command id's state, held saying whether its supervisor
// lives.
func (m *Manager) infoWith(id string, held func(dir string) (bool, error)) (Info, error) {
	if !validID(id) {
		return Info{}, fmt.Errorf("%w: %q is not a background command's id (8 letters and digits, as run__start and run__list say)", ErrNoSuch, clip(id, 32))
	}
	dir := m.dir(id)
	var job Job
	if err := readJSON(filepath.Join(dir, jobFile), &job); err != nil {
		if errors.Is(err, errNone) {
			return Info{}, fmt.Errorf("%w: no background command %s (run__list lists them)", ErrNoSuch, id)
		}
		return Info{}, err
	}
	in := Info{ID: id, Thread: job.Thread, Command: job.Command, Started: job.Started}
	var end End
	err := readJSON(filepath.Join(dir, endFile), &end)
	switch {
	case err == nil:
		in.Status, in.End = Ended, end
		in.Output = end.Output
		return in, nil
	case !errors.Is(err, errNone):
		return Info{}, err
	}
	alive, err := held(dir)
	if err != nil {
		return Info{}, err
	}
	in.Status = Lost
	if alive {
		in.Status = Running
	}
	if segs, err := listSegments(dir); err == nil && len(segs) > 0 {
		in.Output = segs[len(segs)-1].start + segs[len(segs)-1].size
	}
	return in, nil
}

// ErrNoSuch is the refusal of an id naming no command kept.
var ErrNoSuch = errors.New("no such background command")

// List is every command kept, the latest started first.
func (m *Manager) List() ([]Info, error) {
	ids, err := m.ids()
	if err != nil {
		return nil, err
	}
	var all []Info
	for _, id := range ids {
		in, err := m.info(id)
		if errors.Is(err, ErrNoSuch) {
			continue // half made, or removed as it was listed
		}
		if err != nil {
			// One folder that doesn't read costs its command alone.
			in = Info{ID: id, Command: "(its state doesn't read: " + err.Error() + ")", Status: Lost}
		}
		all = append(all, in)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Started.After(all[j].Started) })
	return all, nil
}

// Read reads at most limit bytes of command id's output from offset on.
func (m *Manager) Read(id string, offset int64, limit int) (Output, Info, error) {
	in, err := m.info(id)
	if err != nil {
		return Output{}, Info{}, err
	}
	out, err := readOutput(m.dir(id), offset, limit)
	if err != nil {
		return Output{}, Info{}, err
	}
	if in.Status == Ended {
		out.Total = in.End.Output
	}
	return out, in, nil
}

// prune removes the oldest ended and told commands past KeepEnded.
func (m *Manager) prune() {
	ids, err := m.ids()
	if err != nil {
		return
	}
	type kept struct {
		id      string
		started time.Time
	}
	n := 0
	for _, id := range ids {
		if _, ok := m.told.Load(id); ok {
			n++
		}
	}
	if n <= m.opts.KeepEnded {
		return // the usual case: no file read each sweep
	}
	var ended []kept
	for _, id := range ids {
		if _, ok := m.told.Load(id); !ok {
			continue
		}
		var job Job
		if readJSON(filepath.Join(m.dir(id), jobFile), &job) != nil {
			continue
		}
		ended = append(ended, kept{id, job.Started})
	}
	if len(ended) <= m.opts.KeepEnded {
		return
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].started.Before(ended[j].started) })
	for _, k := range ended[:len(ended)-m.opts.KeepEnded] {
		if err := os.RemoveAll(m.dir(k.id)); err == nil || errors.Is(err, fs.ErrNotExist) {
			m.told.Delete(k.id)
		}
	}
}

// clip is s cut to at most n bytes, never inside a character, for words
// quoted back to the model.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
