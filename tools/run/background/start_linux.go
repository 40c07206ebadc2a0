package background

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
)

// startTimeout bounds how long a supervisor has to say its command
// started.
const startTimeout = 30 * time.Second

// Request is what run__start asks for.
type Request struct {
	Thread  string // the conversation the call was made in
	Hops    int    // the hops of the message being answered
	Command string // the command as said back to the model
	Spec    []byte // the command as the supervisor's Builder makes it
	// MaxRunning and KeepOutput, when said, are the agent's settings now
	// in place of the Manager's.
	MaxRunning int
	KeepOutput int64
}

// ErrTooMany is the refusal of a start past MaxRunning.
var ErrTooMany = errors.New("too many background commands running")

// Start starts req's command in the background, under a supervisor of its
// own, answering once it runs (or why it could not start: nothing is kept
// of one that didn't).
func (m *Manager) Start(ctx context.Context, req Request) (Info, error) {
	if req.Thread == "" {
		return Info{}, errors.New("background: a command is started in a conversation, and the call names none")
	}
	// The count and the folder placed are one step: a command placed is
	// counted running from then on (its lock is held), so the launch,
	// the slow part, runs beside other starts.
	m.mu.Lock()
	locked := true
	defer func() {
		if locked {
			m.mu.Unlock()
		}
	}()
	all, err := m.List()
	if err != nil {
		return Info{}, err
	}
	running := 0
	for _, in := range all {
		if in.Status == Running {
			running++
		}
	}
	most := cmp.Or(req.MaxRunning, m.opts.MaxRunning)
	if running >= most {
		return Info{}, fmt.Errorf("%w: %d of %d at once; stop one (run__stop) or wait for one to end", ErrTooMany, running, most)
	}
	// The folder is made under a name no sweep looks at, its lock taken
	// and job.json written before it is given its id: a sweep never finds
	// a command half made, nor lost while it starts.
	tmp, err := os.MkdirTemp(m.opts.Dir, newPrefix)
	if err != nil {
		return Info{}, fmt.Errorf("background: %w", err)
	}
	lock, err := fsx.Open(filepath.Join(tmp, lockFile), os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return Info{}, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		os.RemoveAll(tmp)
		return Info{}, fmt.Errorf("background: lock: %w", err)
	}
	job := Job{Thread: req.Thread, Hops: req.Hops, Command: req.Command, Spec: req.Spec,
		Started: m.opts.Now().UTC(), KeepOutput: cmp.Or(req.KeepOutput, m.opts.KeepOutput), Grace: m.opts.Grace}
	id, dir, err := m.place(tmp, &job)
	if err != nil {
		os.RemoveAll(tmp)
		return Info{}, err
	}
	m.mu.Unlock()
	locked = false
	if err := m.launch(ctx, dir, lock); err != nil {
		os.RemoveAll(dir)
		return Info{}, err
	}
	return Info{ID: id, Thread: job.Thread, Command: job.Command, Started: job.Started, Status: Running}, nil
}

// place writes job, under a new id, in tmp and renames tmp to its id.
func (m *Manager) place(tmp string, job *Job) (id, dir string, err error) {
	for range 8 {
		job.ID = newID()
		if err := writeJSON(filepath.Join(tmp, jobFile), job); err != nil {
			return "", "", err
		}
		dir = m.dir(job.ID)
		// rename(2) onto an empty folder would replace it: a name taken
		// is looked for first, under the Manager's lock.
		if exists(dir) {
			continue
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", "", fmt.Errorf("background: %w", err)
		}
		return job.ID, dir, fsx.SyncDir(m.opts.Dir)
	}
	return "", "", errors.New("background: no free id")
}

// launch starts the supervisor of the command in dir and waits for it to
// say the command started. The supervisor is a session of its own, so
// nothing sent to the server's terminal or process group reaches it; its
// environment is empty and its folder /, so a command whose spec says
// neither has nothing of the server's.
func (m *Manager) launch(ctx context.Context, dir string, lock *os.File) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.Command(m.opts.Exe(), SupervisorArg, dir)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{lock, pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("background: start its supervisor: %w", err)
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		said <- strings.TrimSpace(line)
	}()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	select {
	case line := <-said:
		if line == "started" {
			go func() {
				cmd.Wait()
				m.wake()
			}()
			return nil
		}
		cmd.Wait()
		if line == "" {
			line = "its supervisor ended before saying so"
		}
		return fmt.Errorf("the command could not be started: %s", line)
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("the command could not be started: its supervisor said nothing in %s (%w)", startTimeout, ctx.Err())
	}
}

// Stop ends command id, its whole process group and every process it
// started: SIGTERM, then SIGKILL after Grace. It answers once the command
// ended, saying how; its end is not told again, run__stop's answer says it.
func (m *Manager) Stop(ctx context.Context, id string) (Info, error) {
	in, err := m.info(id)
	if err != nil || in.Status != Running {
		return in, err
	}
	dir := m.dir(id)
	var proc Proc
	if err := readJSON(filepath.Join(dir, procFile), &proc); err != nil {
		if errors.Is(err, errNone) {
			return Info{}, fmt.Errorf("background: stop %s: it is still starting; stop it again in a moment", id)
		}
		return Info{}, fmt.Errorf("background: stop %s: %w", id, err)
	}
	if err := fsx.Replace(filepath.Join(dir, stopFile), nil, true); err != nil {
		return Info{}, err
	}
	// The process is had (a pidfd) before its lock is looked at: while the
	// lock is held it is the supervisor, and the signal reaches it alone,
	// even were its id taken by another once it ends.
	p, err := os.FindProcess(proc.Supervisor)
	if err == nil {
		defer p.Release()
		if held, _ := lockHeld(dir); held {
			p.Signal(syscall.SIGTERM)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, m.opts.Grace+10*time.Second)
	defer cancel()
	unlock, err := waitUnlocked(wctx, dir)
	if err != nil {
		return Info{}, fmt.Errorf("background: stop %s: it didn't end: %w", id, err)
	}
	defer unlock()
	if in, err = m.infoWith(id, func(string) (bool, error) { return false, nil }); err != nil {
		return Info{}, err
	}
	if err := m.markTold(id); err != nil {
		return Info{}, err
	}
	return in, nil
}
