package background

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The descriptors a supervisor is given beside its standard ones.
const (
	lockFD   = 3 // the folder's lock file, its lock taken by the server
	reportFD = 4 // a pipe to the server: "started" or why not
)

// Supervise is a supervisor's whole life, when this program was started
// again by a run server with args (os.Args, IsSupervisor's): it starts
// the command of the folder args name (as build makes it from its spec),
// in a process group of its own whose output goes to the folder's
// segments, tells the server it started (or why not), waits for it or
// for a stop, ends whatever the command left behind, writes end.json and
// answers the exit code for the supervisor itself. It is the child
// subreaper of everything the command starts, so a process the command
// leaves running is its to end, never the system's.
func Supervise(args []string, build Builder) int {
	if !IsSupervisor(args) {
		return 2
	}
	dir := args[2]
	lock := os.NewFile(lockFD, "lock")
	report := os.NewFile(reportFD, "report")
	if lock == nil || report == nil {
		return 2
	}
	closeAtExec()
	defer lock.Close()
	// Only the server's SIGTERM (run__stop) ends a command; a terminal's
	// hangup or interrupt is not ours.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

	failed := func(err error) int {
		writeJSON(filepath.Join(dir, endFile), End{Exit: -1, Error: "not started: " + err.Error(), Ended: time.Now()})
		fmt.Fprintf(report, "%s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		report.Close()
		return 1
	}
	job, cmd, r, err := startJob(dir, build)
	if err != nil {
		return failed(err)
	}
	fmt.Fprintf(report, "started\n")
	report.Close()

	out := &outputWriter{dir: dir, keep: max(job.KeepOutput, segments)}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, r)
		copied <- err
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	werr := waitStopped(stop, waited, cmd.Process.Pid, job.grace())
	return ended(dir, cmd, werr, r, out, copied)
}

// startJob starts the job kept in dir, as build makes its command: in a
// process group of its own, killed with its supervisor, its output read
// from r; its pid kept (procFile) once it started. The supervisor's
// goroutine is locked to its thread from here (Pdeathsig).
func startJob(dir string, build Builder) (Job, *exec.Cmd, *os.File, error) {
	var job Job
	if err := readJSON(filepath.Join(dir, jobFile), &job); err != nil {
		return job, nil, nil, err
	}
	cmd, err := build(job.Spec)
	if err != nil {
		return job, nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return job, nil, nil, err
	}
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = w, w
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
	}
	// The command dies with its supervisor; the signal is sent when the
	// thread that started it ends, so that thread is this goroutine's for
	// good.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		return job, nil, nil, err
	}
	w.Close()
	pid := cmd.Process.Pid
	// Not synced: a machine's stop ends the processes it names too.
	if err := replaceJSON(filepath.Join(dir, procFile), Proc{Supervisor: os.Getpid(), PID: pid}, false); err != nil {
		syscall.Kill(-pid, syscall.SIGKILL)
		cmd.Wait()
		return job, nil, nil, err
	}
	return job, cmd, r, nil
}

// waitStopped waits for the command, pid, to end (waited): a stop sends
// its group SIGTERM, and SIGKILL once grace has passed. It returns how
// the command's Wait ended.
func waitStopped(stop <-chan os.Signal, waited <-chan error, pid int, grace time.Duration) error {
	var kill <-chan time.Time
	for {
		select {
		case <-stop:
			if kill == nil {
				syscall.Kill(-pid, syscall.SIGTERM)
				kill = time.After(grace)
			}
		case <-kill:
			syscall.Kill(-pid, syscall.SIGKILL)
		case werr := <-waited:
			return werr
		}
	}
}

// ended ends what the command left (its group, every process it left,
// each now the supervisor's child) and keeps how it ended (endFile):
// its exit, its output's length, whether it was stopped. It returns the
// supervisor's exit.
func ended(dir string, cmd *exec.Cmd, werr error, r *os.File, out *outputWriter, copied <-chan error) int {
	pid := cmd.Process.Pid
	// The command ended: its group, and every process it left (each now
	// this one's child), ends with it.
	syscall.Kill(-pid, syscall.SIGKILL)
	endOrphans()
	e := End{Output: -1}
	select {
	case err := <-copied:
		if err != nil {
			e.Error = "output: " + err.Error()
		}
	case <-time.After(5 * time.Second):
		// A process out of reach (given the pipe through a socket) holds
		// it: what it writes is not the command's.
		e.Error = "output: still held open after the command ended; what followed is not kept"
	}
	r.Close()
	out.Close()
	e.Output = out.n
	exitOf(&e, cmd.ProcessState, werr)
	e.Stopped = exists(filepath.Join(dir, stopFile))
	e.Ended = time.Now()
	if err := writeJSON(filepath.Join(dir, endFile), e); err != nil {
		return 1
	}
	return 0
}

// closeAtExec marks every descriptor past the standard three to be
// closed when the command is started: the lock and the report pipe, and
// whatever the server was given by its own starter and passed on, so the
// command holds nothing but its standard three.
func closeAtExec() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// exitOf says in e how the command's process ended.
func exitOf(e *End, ps *os.ProcessState, werr error) {
	if ps == nil {
		e.Exit = -1
		if werr != nil {
			e.Error = "wait: " + werr.Error()
		}
		return
	}
	e.Exit = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Exit = -1
		e.Signal = ws.Signal().String()
	}
}

// endOrphans kills and reaps every child this process has left (the
// command's processes that outlived their parents, reparented to this
// subreaper), until it has none: a process's own children become this
// one's as it dies, and are ended in turn.
func endOrphans() {
	self := os.Getpid()
	for {
		for _, pid := range childrenOf(self) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.ECHILD) {
				return
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || pid == 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// childrenOf lists the processes whose parent is ppid: each of its
// threads' children as /proc says them, else from every process's stat
// (a kernel without CONFIG_PROC_CHILDREN), a read of each process.
func childrenOf(ppid int) []int {
	task := "/proc/" + strconv.Itoa(ppid) + "/task"
	if tids, err := os.ReadDir(task); err == nil {
		var kids []int
		read := false
		for _, t := range tids {
			b, err := os.ReadFile(task + "/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			read = true
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					kids = append(kids, pid)
				}
			}
		}
		if read {
			return kids
		}
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) == ppid {
			kids = append(kids, pid)
		}
	}
	return kids
}

// parentOf is pid's parent as /proc/<pid>/stat says, 0 when unknown.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
